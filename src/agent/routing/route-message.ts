/**
 * Routing: one model call sees the (short-listed) catalog and the recent conversation
 * and answers JSON `{ skills, intent_key, confidence }`. At most two skills; names not
 * in the catalog are dropped and logged. Output that cannot be parsed is retried once,
 * then treated as no skill with reason `parse_failure` (a gap). No usable skill falls back
 * to `skill-builder`, marked `no_skill`: not a gap by itself (small talk routes to no
 * skill), only a note on the turn's gap if the turn fails (docs/gaps.md).
 */
import type { Logger } from "pino";
import { z } from "zod";
import type { SkillSnapshot } from "../../knowledge/skill-catalog.js";
import type { ChatMessage, ChatModel } from "../../llm/chat-model.js";
import { normalizeIntentKey } from "../gaps/intent-key.js";
import { shortlistSkills } from "./lexical-shortlist.js";

export const FALLBACK_SKILL = "skill-builder";
export const MAX_ROUTED_SKILLS = 2;

export type RouteDecision = {
  skills: string[];
  intentKey: string;
  confidence: number;
  /** Set when routing fell back to skill-builder: `parse_failure` is recorded as a gap, `no_skill` only marks the turn. */
  gap?: "no_skill" | "parse_failure";
  dropped: string[];
  /** The model's raw reply when it could not be parsed (for the gap detail). */
  unparsed?: string;
};

const routeReply = z.object({
  skills: z.array(z.string()).default([]),
  intent_key: z.string().default(""),
  confidence: z.coerce.number().min(0).max(1).catch(0.5),
});

export type RouteInput = {
  model: ChatModel;
  snapshot: SkillSnapshot;
  userText: string;
  /** Recent conversation, oldest first, already trimmed. */
  recent: { role: "user" | "assistant"; content: string }[];
  traceId: string;
  agentId: string;
  logger: Logger;
  signal?: AbortSignal;
};

export async function routeMessage(input: RouteInput): Promise<RouteDecision> {
  const candidates = shortlistSkills(
    input.snapshot.skills,
    [...input.recent.map((message) => message.content), input.userText].join("\n"),
    { keep: FALLBACK_SKILL },
  );
  const messages: ChatMessage[] = [
    {
      role: "system",
      content: routingInstructions(
        candidates.map((skill) => `- ${skill.name} [${skill.status}]: ${skill.description}`),
      ),
    },
    { role: "user", content: routingQuestion(input.recent, input.userText) },
  ];
  let parsed = await ask(input, messages);
  if (!parsed.ok) {
    input.logger.warn({ reply: parsed.raw.slice(0, 200) }, "routing reply was not valid JSON; asking once more");
    messages.push(
      { role: "assistant", content: parsed.raw },
      {
        role: "user",
        content:
          'That was not valid JSON. Answer with only the JSON object {"skills": [...], "intent_key": "...", "confidence": 0.0}.',
      },
    );
    parsed = await ask(input, messages);
  }
  if (!parsed.ok) {
    return {
      skills: [FALLBACK_SKILL],
      intentKey: normalizeIntentKey("", input.userText),
      confidence: 0,
      gap: "parse_failure",
      dropped: [],
      unparsed: parsed.raw.slice(0, 500),
    };
  }
  const known = new Set(candidates.map((skill) => skill.name));
  const requested = [...new Set(parsed.value.skills.map((name) => name.trim()))];
  const dropped = requested.filter((name) => !known.has(name));
  if (dropped.length > 0) input.logger.warn({ dropped }, "routing named skills that are not in the catalog; dropped");
  const skills = requested.filter((name) => known.has(name)).slice(0, MAX_ROUTED_SKILLS);
  const intentKey = normalizeIntentKey(parsed.value.intent_key, input.userText);
  const usable = skills.filter((name) => name !== FALLBACK_SKILL);
  if (usable.length === 0) {
    return {
      skills: input.snapshot.get(FALLBACK_SKILL) ? [FALLBACK_SKILL] : [],
      intentKey,
      confidence: parsed.value.confidence,
      gap: "no_skill",
      dropped,
    };
  }
  return { skills: usable, intentKey, confidence: parsed.value.confidence, dropped };
}

async function ask(
  input: RouteInput,
  messages: ChatMessage[],
): Promise<{ ok: true; value: z.output<typeof routeReply> } | { ok: false; raw: string }> {
  const response = await input.model.complete({
    messages,
    purpose: "route",
    traceId: input.traceId,
    agentId: input.agentId,
    maxTokens: 300,
    ...(input.signal ? { signal: input.signal } : {}),
  });
  const raw = response.content ?? "";
  const json = extractJsonObject(raw);
  if (json === undefined) return { ok: false, raw };
  const result = routeReply.safeParse(json);
  return result.success ? { ok: true, value: result.data } : { ok: false, raw };
}

/** The first JSON object in a reply, tolerating code fences and surrounding prose. */
export function extractJsonObject(text: string): unknown {
  const stripped = text.replace(/```(?:json)?/gi, "");
  const start = stripped.indexOf("{");
  const end = stripped.lastIndexOf("}");
  if (start < 0 || end <= start) return undefined;
  try {
    const value: unknown = JSON.parse(stripped.slice(start, end + 1));
    return typeof value === "object" && value !== null && !Array.isArray(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

function routingInstructions(catalog: string[]): string {
  return [
    "You route a chat message to the skills that help answer it.",
    "Skills:",
    ...catalog,
    "",
    `Pick at most ${MAX_ROUTED_SKILLS} skills whose description fits what the user wants now. Use [] when none fits.`,
    'Reply with only a JSON object: {"skills": ["name"], "intent_key": "short-lowercase-slug-of-what-the-user-wants", "confidence": 0.0 to 1.0}.',
    'intent_key names the request in 2-4 English words joined by hyphens, e.g. "deploy-docker-compose" or "summarize-meeting-notes".',
  ].join("\n");
}

function routingQuestion(recent: { role: string; content: string }[], userText: string): string {
  const context = recent
    .slice(-6)
    .map((message) => `${message.role}: ${message.content.slice(0, 400)}`)
    .join("\n");
  return `${context ? `Recent conversation:\n${context}\n\n` : ""}Message to route:\n${userText}`;
}
