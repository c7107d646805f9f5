/**
 * Environment entries that tag the processes a toolhost starts, so they can be found
 * after they leave its process group (`setsid`) or outlive the toolhost itself (a crash
 * in none mode, where no pid namespace takes them down). Shared by the child, which
 * tags its commands, and the parent, which cleans up after a child that died.
 */
import { readdirSync, readFileSync } from "node:fs";

/** Set to a per-call id on every shell command. */
export const CALL_TAG_VARIABLE = "LAODING_TOOL_CALL";
/** Set to the toolhost's pid on every shell command it starts in none mode. */
export const OWNER_TAG_VARIABLE = "LAODING_TOOLHOST_PID";

/** SIGKILLs every process whose environment holds `variable=value`; returns their pids. */
export function killTagged(variable: string, value: string): number[] {
  const needle = `${variable}=${value}`;
  const killed: number[] = [];
  let pids: string[];
  try {
    pids = readdirSync("/proc").filter((name) => /^\d+$/.test(name));
  } catch {
    return killed;
  }
  for (const pid of pids) {
    try {
      if (readFileSync(`/proc/${pid}/environ`, "latin1").split("\0").includes(needle)) {
        process.kill(Number(pid), "SIGKILL");
        killed.push(Number(pid));
      }
    } catch {
      // Gone, or not ours to read.
    }
  }
  return killed;
}
