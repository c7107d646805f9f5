/**
 * Cluster queries over capability gaps. A cluster is (agent, intent key, reason) within a
 * lookback window. Every query is an index range scan of the `gaps_cluster` or
 * `gaps_recent` index, so evaluating one cluster stays fast at a million rows.
 */
import type { Clock } from "./clock.js";
import type { GapClass } from "./gaps-store.js";
import type { Db } from "./open-database.js";

export type ClusterKey = { agentId: string; intentKey: string; reason: string };

export type ClusterStats = ClusterKey & {
  gapClass: GapClass;
  count: number;
  sessions: number;
  users: number;
  firstSeen: number;
  lastSeen: number;
};

export type DraftRow = {
  id: number;
  agentId: string;
  intentKey: string;
  status: "drafting" | "drafted" | "linked" | "rejected";
  skillName: string | null;
  path: string | null;
  clusterSize: number;
  reason: string | null;
  createdAt: number;
};

export type GapClustersStore = ReturnType<typeof createGapClustersStore>;

const STATS = `count(*) AS count, count(DISTINCT session_id) AS sessions, count(DISTINCT coalesce(user_id, session_id)) AS users,
  min(created_at) AS firstSeen, max(created_at) AS lastSeen`;
const DRAFT_COLUMNS = `id, agent_id AS agentId, intent_key AS intentKey, status, skill_name AS skillName, path, cluster_size AS clusterSize, reason, created_at AS createdAt`;

export function createGapClustersStore(db: Db, clock: Clock) {
  const cluster = db.prepare<[string, string, string, number], Omit<ClusterStats, keyof ClusterKey | "gapClass"> & { gapClass: GapClass | null }>(
    `SELECT ${STATS}, max(class) AS gapClass FROM capability_gaps WHERE agent_id = ? AND intent_key = ? AND reason = ? AND created_at >= ?`,
  );
  const top = db.prepare<[string, number, number], ClusterStats>(
    `SELECT agent_id AS agentId, intent_key AS intentKey, reason, max(class) AS gapClass, ${STATS}
     FROM capability_gaps WHERE agent_id = ? AND created_at >= ?
     GROUP BY intent_key, reason ORDER BY count DESC, lastSeen DESC LIMIT ?`,
  );
  const samples = db.prepare<[string, string, string, number, number], { userText: string | null; detail: string | null; tool: string | null; errorCode: string | null }>(
    `SELECT user_text AS userText, detail, tool, error_code AS errorCode FROM capability_gaps
     WHERE agent_id = ? AND intent_key = ? AND reason = ? AND created_at >= ? ORDER BY created_at DESC LIMIT ?`,
  );
  const keysBySignature = db.prepare<[string, string], { intentKey: string }>(`SELECT intent_key AS intentKey FROM intent_keys WHERE agent_id = ? AND signature = ? ORDER BY last_seen DESC LIMIT 1`);
  const recentKeys = db.prepare<[string, number], { intentKey: string; signature: string }>(
    `SELECT intent_key AS intentKey, signature FROM intent_keys WHERE agent_id = ? AND last_seen >= ? ORDER BY last_seen DESC LIMIT 500`,
  );
  const upsertKey = db.prepare(
    `INSERT INTO intent_keys (agent_id, intent_key, signature, last_seen) VALUES (?, ?, ?, ?)
     ON CONFLICT (agent_id, intent_key) DO UPDATE SET last_seen = excluded.last_seen`,
  );
  const draftFor = db.prepare<[string, string], DraftRow>(`SELECT ${DRAFT_COLUMNS} FROM skill_drafts WHERE agent_id = ? AND intent_key = ?`);
  const drafts = db.prepare<[string], DraftRow>(`SELECT ${DRAFT_COLUMNS} FROM skill_drafts WHERE agent_id = ? ORDER BY id`);
  const claim = db.prepare(
    `INSERT OR IGNORE INTO skill_drafts (agent_id, intent_key, status, skill_name, cluster_size, created_at, updated_at) VALUES (?, ?, 'drafting', ?, ?, ?, ?)`,
  );
  const settle = db.prepare(`UPDATE skill_drafts SET status = ?, skill_name = ?, path = ?, reason = ?, updated_at = ? WHERE agent_id = ? AND intent_key = ?`);
  const release = db.prepare(`DELETE FROM skill_drafts WHERE agent_id = ? AND intent_key = ? AND status = 'drafting'`);

  return {
    cluster(key: ClusterKey, sinceMs: number): ClusterStats | undefined {
      const row = cluster.get(key.agentId, key.intentKey, key.reason, sinceMs);
      if (!row || row.count === 0 || row.gapClass === null) return undefined;
      return { ...key, ...row, gapClass: row.gapClass };
    },
    top: (agentId: string, sinceMs: number, limit: number): ClusterStats[] => top.all(agentId, sinceMs, limit),
    samples: (key: ClusterKey, sinceMs: number, limit = 5) => samples.all(key.agentId, key.intentKey, key.reason, sinceMs, limit),
    keyWithSignature: (agentId: string, signature: string): string | undefined => keysBySignature.get(agentId, signature)?.intentKey,
    recentKeys: (agentId: string, sinceMs: number) => recentKeys.all(agentId, sinceMs),
    rememberKey: (agentId: string, intentKey: string, signature: string): void => {
      upsertKey.run(agentId, intentKey, signature, clock.now());
    },
    draftFor: (agentId: string, intentKey: string): DraftRow | undefined => draftFor.get(agentId, intentKey),
    drafts: (agentId: string): DraftRow[] => drafts.all(agentId),
    /** Claims the right to draft for an intent; false when another claim or draft exists. */
    claimDraft: (agentId: string, intentKey: string, skillName: string, clusterSize: number): boolean => {
      const now = clock.now();
      return claim.run(agentId, intentKey, skillName, clusterSize, now, now).changes === 1;
    },
    settleDraft: (agentId: string, intentKey: string, outcome: { status: "drafted" | "linked" | "rejected"; skillName: string; path?: string; reason?: string }): void => {
      settle.run(outcome.status, outcome.skillName, outcome.path ?? null, outcome.reason ?? null, clock.now(), agentId, intentKey);
    },
    releaseDraft: (agentId: string, intentKey: string): void => {
      release.run(agentId, intentKey);
    },
  };
}
