/**
 * The record of what `laoding share apply` copied where: `<workspace>/data/share-moves.json`
 * (the bot's private data folder, written atomically). One entry per agent and legacy
 * item: the old share path, the new path under `share/agents/<A>/`, and when it was first
 * recorded. The system prompt reads it to tell each agent, for a while, where its things
 * went (src/agent/prompt/share-area-section.ts); a rollback forgets the moves it undoes.
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { z } from "zod";
import type { RuntimeLayout } from "../config/runtime-layout.js";
import type { ShareMapping } from "./share-mapping.js";
import type { SharePlan } from "./share-plan.js";
import { writeRecordAtomically } from "./share-record.js";

const moveSchema = z.object({
  agentId: z.string(),
  from: z.string(),
  to: z.string(),
  movedAt: z.string(),
  backup: z.string(),
});
const recordSchema = z.object({ version: z.literal(1), moves: z.array(moveSchema) });
export type ShareMove = z.output<typeof moveSchema>;

export const shareMovesFile = (dataDir: string) => join(dataDir, "share-moves.json");

/** The recorded moves; none when there is no record or it cannot be read (the prompt then only names the private area). */
export function readShareMoves(file: string): ShareMove[] {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return [];
  }
  try {
    const parsed = recordSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data.moves : [];
  } catch {
    return [];
  }
}

/**
 * Adds the moves of one apply. A move already recorded keeps its first time, so running
 * apply again (which copies nothing) does not make the agents hear about it for longer.
 */
export function recordShareMoves(
  file: string,
  moves: Omit<ShareMove, "movedAt" | "backup">[],
  options: { now: Date; backup: string },
): ShareMove[] {
  const recorded = readShareMoves(file);
  const key = (move: Pick<ShareMove, "agentId" | "from" | "to">) => `${move.agentId}\0${move.from}\0${move.to}`;
  const known = new Set(recorded.map(key));
  const added = moves
    .filter((move) => !known.has(key(move)))
    .map((move) => ({ ...move, movedAt: options.now.toISOString(), backup: options.backup }));
  if (added.length > 0 || recorded.length === 0)
    writeRecordAtomically(file, { version: 1, moves: [...recorded, ...added] });
  return added;
}

/** Forgets the moves made by the apply that wrote `backup` and by any later apply: a rollback to it undid them. */
export function forgetMovesSince(file: string, backup: string, backupWrittenAtMs: number): number {
  const recorded = readShareMoves(file);
  const kept = recorded.filter((move) => move.backup !== backup && Date.parse(move.movedAt) < backupWrittenAtMs);
  if (kept.length !== recorded.length) writeRecordAtomically(file, { version: 1, moves: kept });
  return recorded.length - kept.length;
}

/** What an apply of this plan moves, per agent: each mapped item, and each Go-era draft's folder. */
export function movesOfPlan(
  layout: RuntimeLayout,
  mapping: ShareMapping,
  plan: SharePlan,
): Omit<ShareMove, "movedAt" | "backup">[] {
  const items = mapping.items.flatMap((item) =>
    item.agents.map((agentId) => ({
      agentId,
      from: join(plan.shareDir, item.path),
      to: join(layout.agentTrees(agentId).privateDir, item.to ?? item.path),
    })),
  );
  // A Go-era draft is the one copy without a place in the share: its skill folder moved.
  const drafts = plan.copies
    .filter((copy) => copy.inShare === undefined)
    .map((copy) => ({ agentId: copy.agentId, from: dirname(copy.source), to: dirname(copy.dest) }));
  return [...items, ...drafts];
}
