/**
 * Replicas must run the same configuration (agents, channels, limits). Each replica
 * records a fingerprint per variable — a short hash, never the value — and names the
 * variables where a live replica differs from it. Variables that are meant to differ per
 * replica (its name, where its logs go, its workspace mount path, the ports it listens
 * on) are left out.
 */
import { createHash } from "node:crypto";

/** Per-replica by design: not compared. */
export const PER_REPLICA_VARIABLES = new Set([
  "REPLICA_NAME",
  "LOG_DIR",
  "LOG_LEVEL",
  "AGENT_WORKSPACE_DIR",
  "CONFIG_ENV_FILE",
  "DATABASE_POOL_MAX",
  // Where this host listens: replicas sharing a host need ports of their own.
  "WEBHOOK_HOST",
  "TELEGRAM_WEBHOOK_PORT",
  "FEISHU_WEBHOOK_PORT",
  "ADMIN_HOST",
  "ADMIN_PORT",
]);

export type Fingerprint = Record<string, string>;

const digest = (value: string) => createHash("sha256").update(value).digest("hex").slice(0, 16);

/**
 * `raw` is each variable's raw string as configured; `files` the shared configuration files'
 * contents (agents.json). Secrets are left out: an unsalted hash in the database would let a
 * weak one be guessed offline.
 */
export function configFingerprint(
  raw: Partial<Record<string, string>>,
  files: Record<string, string> = {},
  secrets: ReadonlySet<string> = new Set(),
): Fingerprint {
  const fingerprint: Fingerprint = {};
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined || PER_REPLICA_VARIABLES.has(name) || secrets.has(name)) continue;
    fingerprint[name] = digest(`${name}=${value}`);
  }
  for (const [name, content] of Object.entries(files)) fingerprint[name] = digest(content);
  return fingerprint;
}

/** The names whose fingerprints differ, or that one side sets and the other does not, sorted. */
export function differingVariables(mine: Fingerprint, theirs: Fingerprint): string[] {
  const names = new Set([...Object.keys(mine), ...Object.keys(theirs)]);
  return [...names].filter((name) => mine[name] !== theirs[name]).sort();
}
