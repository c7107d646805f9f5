/**
 * The per-session working folder `<WORK_DIR>/<agent>/<chat-key>/`, the cwd of the
 * agent's tools for that chat. The chat key is made filesystem-safe; a key that had to
 * be changed gets a short hash so two chats never share a folder. The toolhost creates
 * the folder (owned by the agent's uid) and its `团队经验` link on first use.
 */
import { createHash } from "node:crypto";
import { join } from "node:path";
import type { AgentTrees } from "../config/runtime-layout.js";

export function chatKey(channel: string, chatId: string): string {
  const raw = `${channel}-${chatId}`;
  const safe = raw.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 80);
  if (safe === raw) return safe;
  return `${safe.slice(0, 70)}-${createHash("sha256").update(raw).digest("hex").slice(0, 8)}`;
}

export function chatFolder(trees: AgentTrees, channel: string, chatId: string): string {
  return join(trees.workTree, chatKey(channel, chatId));
}
