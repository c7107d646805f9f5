/**
 * Step: which skills (at most two) the turn works with. A routing reply that could not be
 * parsed is a gap; no matching skill is not: a turn routed to no skill that answers
 * without a failure is fine (small talk), and one that fails says so in its gap.
 */
import type { SkillSnapshot } from "../../knowledge/skill-catalog.js";
import { routeMessage, type RouteDecision } from "../routing/route-message.js";
import type { HistoryMessage, TurnContext } from "./turn-context.js";

export async function routeTurn(
  turn: TurnContext,
  snapshot: SkillSnapshot,
  history: HistoryMessage[],
): Promise<RouteDecision> {
  const route = await routeMessage({
    model: turn.model,
    snapshot,
    userText: turn.message.text,
    recent: history,
    traceId: turn.traceId,
    agentId: turn.agent.id,
    logger: turn.log,
  });
  turn.log.info(
    {
      skills: route.skills,
      intentKey: route.intentKey,
      confidence: route.confidence,
      catalogVersion: snapshot.version,
    },
    "routed",
  );
  if (route.gap === "parse_failure")
    await turn.env.recordGap({
      ...turn.gapBase,
      intentKey: route.intentKey,
      reason: "parse_failure",
      ...(route.unparsed ? { detail: `routing reply: ${route.unparsed}` } : {}),
    });
  return route;
}
