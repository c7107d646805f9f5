/**
 * Starts `laoding toolhost --agent <id>` with an explicit, allowlisted environment:
 * never the parent's whole env, which holds API keys and bot tokens. The child reads
 * the configuration files itself; non-secret settings from the parent's environment
 * are passed on so both sides agree.
 */
import { spawn, type ChildProcess } from "node:child_process";

const PASSED_SYSTEM_VARIABLES = ["PATH", "HOME", "LANG", "LC_ALL", "TZ", "TMPDIR"];

export type SpawnToolhostOptions = {
  /** The CLI entry file (dist/cli/main.js, or src/cli/main.ts under tsx). */
  entry: string;
  agentId: string;
  workspaceDir: string;
  /** The parent's environment; only allowlisted, non-secret names are passed. */
  env: NodeJS.ProcessEnv;
  /** Configuration variable names that may be passed (the non-secret ones). */
  passVariables: readonly string[];
};

export function spawnToolhost(options: SpawnToolhostOptions): ChildProcess {
  const env: NodeJS.ProcessEnv = {};
  for (const name of [...PASSED_SYSTEM_VARIABLES, ...options.passVariables]) {
    if (options.env[name] !== undefined) env[name] = options.env[name];
  }
  // Under tests and `npm run dev` the entry is TypeScript: load tsx by absolute URL so the
  // child does not depend on its cwd to find it.
  const loader = options.entry.endsWith(".ts") ? ["--import", import.meta.resolve("tsx")] : [];
  return spawn(process.execPath, [...loader, options.entry, "toolhost", "--agent", options.agentId, "--workspace", options.workspaceDir], {
    env,
    // Own process group: stopping the child takes its tool processes with it.
    detached: true,
    shell: false,
    stdio: ["pipe", "pipe", "inherit"],
  });
}
