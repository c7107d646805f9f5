/**
 * Cluster queries over capability gaps. A cluster is (agent, intent key, reason) within a
 * lookback window; environment gaps group by their cause instead (gap-causes.ts), computed
 * from the row so older rows keyed by the user's words group by cause too. Every query is
 * an index range scan of the `gaps_cluster` or `gaps_recent` index, so evaluating one
 * cluster stays fast at a million rows.
 */
import type { Clock } from "./clock.js";
import { ENVIRONMENT_CAUSE_SQL } from "./gap-causes.js";
import type { GapClass } from "./gaps-store.js";
import type { SqlDriver } from "./sql/sql-driver.js";

export type ClusterKey = { agentId: string; intentKey: string; reason: string };

export type ClusterStats = ClusterKey & {
  gapClass: GapClass;
  count: number;
  sessions: number;
  users: number;
  firstSeen: number;
  lastSeen: number;
};

/** One environment cause of an agent within a window: times in ms since the epoch; never the user's words. */
export type EnvironmentClusterReport = {
  /** An EnvironmentCause (gap-causes.ts). */
  cause: string;
  count: number;
  firstSeenAt: number;
  lastSeenAt: number;
  lastDetail: string | null;
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

// A gap without a user counts its session as the user: the session id is tagged so it never equals a user id (PostgreSQL's COALESCE needs one type).
const STATS = `count(*) AS count, count(DISTINCT session_id) AS sessions, count(DISTINCT coalesce(user_id, 'session:' || CAST(session_id AS TEXT))) AS users,
  min(created_at) AS firstSeen, max(created_at) AS lastSeen`;
const DRAFT_COLUMNS = `id, agent_id AS agentId, intent_key AS intentKey, status, skill_name AS skillName, path, cluster_size AS clusterSize, reason, created_at AS createdAt`;

const CLUSTER = `SELECT ${STATS}, max(class) AS gapClass FROM capability_gaps WHERE agent_id = ? AND intent_key = ? AND reason = ? AND created_at >= ?`;
// Ordered by the aggregates themselves: PostgreSQL keeps the quoted camelCase aliases out of reach of an unquoted ORDER BY.
// Capability clusters only: environment gaps are shown apart, by cause (ENVIRONMENT, below).
const TOP = `SELECT agent_id AS agentId, intent_key AS intentKey, reason, max(class) AS gapClass, ${STATS}
  FROM capability_gaps WHERE agent_id = ? AND created_at >= ? AND class = 'capability'
  GROUP BY agent_id, intent_key, reason ORDER BY count(*) DESC, max(created_at) DESC LIMIT ?`;
const SAMPLES = `SELECT user_text AS userText, detail, tool, error_code AS errorCode FROM capability_gaps
  WHERE agent_id = ? AND intent_key = ? AND reason = ? AND created_at >= ? ORDER BY created_at DESC LIMIT ?`;
const ENVIRONMENT = `SELECT cause, count(*) AS count, min(created_at) AS firstSeenAt, max(created_at) AS lastSeenAt
  FROM (SELECT ${ENVIRONMENT_CAUSE_SQL} AS cause, created_at FROM capability_gaps
    WHERE agent_id = ? AND created_at >= ? AND class = 'environment') environment_gaps
  GROUP BY cause ORDER BY max(created_at) DESC, cause`;
const LAST_DETAIL = `SELECT detail FROM capability_gaps
  WHERE agent_id = ? AND created_at >= ? AND class = 'environment' AND ${ENVIRONMENT_CAUSE_SQL} = ?
  ORDER BY created_at DESC, id DESC LIMIT 1`;
/** An environment problem's last error as shown to operators: enough to recognise it. */
export const LAST_DETAIL_MAX_CHARS = 300;
const KEY_BY_SIGNATURE = `SELECT intent_key AS intentKey FROM intent_keys WHERE agent_id = ? AND signature = ? ORDER BY last_seen DESC LIMIT 1`;
const RECENT_KEYS = `SELECT intent_key AS intentKey, signature FROM intent_keys WHERE agent_id = ? AND last_seen >= ? ORDER BY last_seen DESC LIMIT 500`;
const UPSERT_KEY = `INSERT INTO intent_keys (agent_id, intent_key, signature, last_seen) VALUES (?, ?, ?, ?)
  ON CONFLICT (agent_id, intent_key) DO UPDATE SET last_seen = excluded.last_seen`;
const DRAFT_FOR = `SELECT ${DRAFT_COLUMNS} FROM skill_drafts WHERE agent_id = ? AND intent_key = ?`;
const DRAFTS = `SELECT ${DRAFT_COLUMNS} FROM skill_drafts WHERE agent_id = ? ORDER BY id`;
/**
 * A claim left 'drafting' this long belongs to a turn (or a replica) that died before it
 * settled: it may be taken over. Drafting is one model call, well under this.
 */
export const STALE_DRAFT_CLAIM_MS = 15 * 60 * 1000;
// skill_drafts_one_per_intent arbitrates between concurrent claims (replicas included): one insert or takeover wins.
const CLAIM = `INSERT INTO skill_drafts (agent_id, intent_key, status, skill_name, cluster_size, created_at, updated_at) VALUES (?, ?, 'drafting', ?, ?, ?, ?)
  ON CONFLICT (agent_id, intent_key) DO UPDATE SET skill_name = excluded.skill_name, cluster_size = excluded.cluster_size,
    created_at = excluded.created_at, updated_at = excluded.updated_at
  WHERE skill_drafts.status = 'drafting' AND skill_drafts.updated_at < ?`;
const SETTLE = `UPDATE skill_drafts SET status = ?, skill_name = ?, path = ?, reason = ?, updated_at = ? WHERE agent_id = ? AND intent_key = ?`;
const RELEASE = `DELETE FROM skill_drafts WHERE agent_id = ? AND intent_key = ? AND status = 'drafting'`;

type Sample = { userText: string | null; detail: string | null; tool: string | null; errorCode: string | null };

export function createGapClustersStore(sql: SqlDriver, clock: Clock) {
  return {
    async cluster(key: ClusterKey, sinceMs: number): Promise<ClusterStats | undefined> {
      const row = await sql.get<Omit<ClusterStats, keyof ClusterKey | "gapClass"> & { gapClass: GapClass | null }>(
        CLUSTER,
        [key.agentId, key.intentKey, key.reason, sinceMs],
      );
      if (!row || row.count === 0 || row.gapClass === null) return undefined;
      return { ...key, ...row, gapClass: row.gapClass };
    },
    top: (agentId: string, sinceMs: number, limit: number): Promise<ClusterStats[]> =>
      sql.all<ClusterStats>(TOP, [agentId, sinceMs, limit]),
    /** The agent's environment gaps by cause within the window, the most recently seen first. */
    async environment(agentId: string, sinceMs: number): Promise<EnvironmentClusterReport[]> {
      const causes = await sql.all<Omit<EnvironmentClusterReport, "lastDetail">>(ENVIRONMENT, [agentId, sinceMs]);
      const reports: EnvironmentClusterReport[] = [];
      for (const cause of causes) {
        const last = await sql.get<{ detail: string | null }>(LAST_DETAIL, [agentId, sinceMs, cause.cause]);
        reports.push({ ...cause, lastDetail: last?.detail?.slice(0, LAST_DETAIL_MAX_CHARS) ?? null });
      }
      return reports;
    },
    samples: (key: ClusterKey, sinceMs: number, limit = 5): Promise<Sample[]> =>
      sql.all<Sample>(SAMPLES, [key.agentId, key.intentKey, key.reason, sinceMs, limit]),
    keyWithSignature: async (agentId: string, signature: string): Promise<string | undefined> =>
      (await sql.get<{ intentKey: string }>(KEY_BY_SIGNATURE, [agentId, signature]))?.intentKey,
    recentKeys: (agentId: string, sinceMs: number): Promise<Array<{ intentKey: string; signature: string }>> =>
      sql.all<{ intentKey: string; signature: string }>(RECENT_KEYS, [agentId, sinceMs]),
    rememberKey: async (agentId: string, intentKey: string, signature: string): Promise<void> => {
      await sql.run(UPSERT_KEY, [agentId, intentKey, signature, clock.now()]);
    },
    draftFor: (agentId: string, intentKey: string): Promise<DraftRow | undefined> =>
      sql.get<DraftRow>(DRAFT_FOR, [agentId, intentKey]),
    drafts: (agentId: string): Promise<DraftRow[]> => sql.all<DraftRow>(DRAFTS, [agentId]),
    /** Claims the right to draft for an intent; false when another claim or draft exists. */
    claimDraft: async (
      agentId: string,
      intentKey: string,
      skillName: string,
      clusterSize: number,
    ): Promise<boolean> => {
      const now = clock.now();
      return (
        (await sql.run(CLAIM, [agentId, intentKey, skillName, clusterSize, now, now, now - STALE_DRAFT_CLAIM_MS]))
          .changes === 1
      );
    },
    settleDraft: async (
      agentId: string,
      intentKey: string,
      outcome: { status: "drafted" | "linked" | "rejected"; skillName: string; path?: string; reason?: string },
    ): Promise<void> => {
      await sql.run(SETTLE, [
        outcome.status,
        outcome.skillName,
        outcome.path ?? null,
        outcome.reason ?? null,
        clock.now(),
        agentId,
        intentKey,
      ]);
    },
    releaseDraft: async (agentId: string, intentKey: string): Promise<void> => {
      await sql.run(RELEASE, [agentId, intentKey]);
    },
  };
}
