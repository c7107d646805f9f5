/**
 * A running bot leaves its pid in `data/bot.pid`, so commands such as `laoding skills
 * reload` can tell whether there is a bot to talk to instead of claiming they asked one.
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const FILE = "bot.pid";

/** Records this process as the workspace's bot; returns the function that removes the record. */
export function recordRunningBot(dataDir: string, pid = process.pid): () => void {
  const path = join(dataDir, FILE);
  writeFileSync(path, `${pid}\n`, { mode: 0o600 });
  return () => {
    if (runningBotPid(dataDir) === pid) rmSync(path, { force: true });
  };
}

/** The pid of the workspace's running bot, or undefined (no file, or its process is gone). */
export function runningBotPid(dataDir: string): number | undefined {
  let pid: number;
  try {
    pid = Number(readFileSync(join(dataDir, FILE), "utf8").trim());
  } catch {
    return undefined;
  }
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  try {
    process.kill(pid, 0);
    return pid;
  } catch (error) {
    // EPERM: alive, but another user's; still a bot.
    return (error as NodeJS.ErrnoException).code === "EPERM" ? pid : undefined;
  }
}
