/**
 * The per-session working folder `<WORK_DIR>/<agent>/<chat-key>/`, the cwd of the
 * agent's tools for that chat. The chat key is made filesystem-safe; a key that had to
 * be changed gets a short hash so two chats never share a folder. The folder holds the
 * link `团队经验` to the agent's experience library.
 */
import { createHash } from "node:crypto";
import { lstatSync, mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { EXPERIENCE_LINK_NAME, type AgentTrees } from "../config/runtime-layout.js";

export function chatKey(channel: string, chatId: string): string {
  const raw = `${channel}-${chatId}`;
  const safe = raw.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 80);
  if (safe === raw) return safe;
  return `${safe.slice(0, 70)}-${createHash("sha256").update(raw).digest("hex").slice(0, 8)}`;
}

export function ensureChatFolder(trees: AgentTrees, channel: string, chatId: string, withLibraryLink: boolean): string {
  const folder = join(trees.workTree, chatKey(channel, chatId));
  mkdirSync(folder, { recursive: true });
  if (withLibraryLink) {
    const link = join(folder, EXPERIENCE_LINK_NAME);
    if (!exists(link)) {
      mkdirSync(trees.experienceDir, { recursive: true });
      // Absolute target: the OS sandbox binds the library at the same path, so it resolves inside too.
      symlinkSync(trees.experienceDir, link);
    }
  }
  return folder;
}

function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}
