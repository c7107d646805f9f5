/**
 * Who an agent is to the kernel when the bot runs as root: a dedicated uid (and gid of
 * the same number) derived from its id, and the synthetic passwd/group files that name
 * it inside the sandbox. Stable across restarts and hosts without a registry.
 */
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const UID_SPAN = 50_000;

/** A stable uid per agent id (FNV-1a). */
export function agentUid(agentId: string, base: number): number {
  let hash = 0x811c9dc5;
  for (const char of Buffer.from(agentId, "utf8")) {
    hash ^= char;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return base + (hash % UID_SPAN);
}

export type IdentityFiles = { passwd: string; group: string };

/** Writes world-readable passwd/group files naming the agent's uid into `dir`. */
export function writeIdentityFiles(dir: string, agentId: string, uid: number, home: string): IdentityFiles {
  mkdirSync(dir, { recursive: true });
  chmodSync(dir, 0o755);
  const passwd = join(dir, "passwd");
  const group = join(dir, "group");
  writeFileSync(
    passwd,
    `agent-${agentId}:x:${uid}:${uid}:LaodingBot agent ${agentId}:${home}:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n`,
    { mode: 0o644 },
  );
  writeFileSync(group, `agent-${agentId}:x:${uid}:\nnogroup:x:65534:\n`, { mode: 0o644 });
  return { passwd, group };
}
