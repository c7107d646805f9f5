/**
 * The prompt section that tells an agent where its own files live: always its private
 * folder (`share/agents/<A>/`), and, for 30 days after `laoding share apply`, which old
 * shared paths were copied there. Only the agent's own moves are shown (another agent's
 * paths would tell it what the others have), at most MAX_MOVE_LINES of them.
 */
import type { RuntimeLayout } from "../../config/runtime-layout.js";
import { readShareMoves, shareMovesFile, type ShareMove } from "../../share/share-moves.js";
import type { PromptSection } from "./system-prompt.js";

export const SHARE_MOVES_SHOWN_MS = 30 * 24 * 60 * 60 * 1000;
export const MAX_MOVE_LINES = 8;

/** The section from what is recorded in the workspace's data folder, read at each turn (the record is small). */
export function agentAreaSection(options: { layout: RuntimeLayout; agentId: string; nowMs: number }): PromptSection {
  const moves = readShareMoves(shareMovesFile(options.layout.dataDir));
  return shareAreaSection({
    privateDir: options.layout.agentTrees(options.agentId).privateDir,
    agentId: options.agentId,
    moves,
    nowMs: options.nowMs,
  });
}

export function shareAreaSection(options: {
  privateDir: string;
  agentId: string;
  moves: ShareMove[];
  nowMs: number;
}): PromptSection {
  const recent = options.moves.filter((move) => move.agentId === options.agentId && isRecent(move, options.nowMs));
  const lines = [
    "## Your private folder",
    `Your own files live in ${options.privateDir}/ (no other agent can see it). Keep scripts and notes you reuse there.`,
  ];
  if (recent.length > 0) {
    lines.push(
      "Files from the old shared folder were copied into it; use the new paths (the old ones are going away):",
    );
    lines.push(...recent.slice(0, MAX_MOVE_LINES).map((move) => `- ${move.from} -> ${move.to}`));
    if (recent.length > MAX_MOVE_LINES)
      lines.push(`- and ${recent.length - MAX_MOVE_LINES} more (all under ${options.privateDir}/)`);
  }
  return { name: "private-folder", content: lines.join("\n") };
}

function isRecent(move: ShareMove, nowMs: number): boolean {
  const movedAtMs = Date.parse(move.movedAt);
  return Number.isFinite(movedAtMs) && nowMs - movedAtMs < SHARE_MOVES_SHOWN_MS;
}
