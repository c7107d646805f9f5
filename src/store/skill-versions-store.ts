/**
 * Versions of distilled skills. One version per skill is active (its text is the live
 * SKILL.md); a new version starts as a candidate, becomes active only through the
 * ratchet, and an active version on trial counts the outcomes of the tasks that use it.
 * The live version also counts every use with an outcome (uses, successes, last use):
 * the evidence its lifecycle (draft, active, deprecated in its SKILL.md) is judged by.
 * Every status change is ledgered with before and after.
 */
import type { Clock } from "./clock.js";
import type { LedgerStore } from "./ledger-store.js";
import type { SqlDriver } from "./sql/sql-driver.js";

export type SkillVersionStatus = "candidate" | "active" | "rejected" | "rolled_back" | "retired";

export type SkillVersion = {
  id: number;
  agentId: string;
  skillName: string;
  tag: string;
  version: number;
  status: SkillVersionStatus;
  content: string;
  bullets: number;
  baselineRate: number | null;
  trialUses: number;
  trialSuccesses: number;
  /** Tasks with an outcome that used this version while it was live (since it last went live). */
  uses: number;
  successes: number;
  lastUsedAt: number | null;
  createdAt: number;
  updatedAt: number;
};

export type SkillVersionsStore = ReturnType<typeof createSkillVersionsStore>;

const COLUMNS = `id, agent_id AS agentId, skill_name AS skillName, tag, version, status, content, bullets, baseline_rate AS baselineRate,
  trial_uses AS trialUses, trial_successes AS trialSuccesses, uses, successes, last_used_at AS lastUsedAt, created_at AS createdAt, updated_at AS updatedAt`;

const BY_ID = `SELECT ${COLUMNS} FROM skill_versions WHERE id = ?`;
const OF_SKILL = `SELECT ${COLUMNS} FROM skill_versions WHERE agent_id = ? AND skill_name = ? ORDER BY version`;
const OF_AGENT = `SELECT ${COLUMNS} FROM skill_versions WHERE agent_id = ? ORDER BY skill_name, version`;
// Going live starts its trial and its lifecycle's counters afresh.
const SET_STATUS_RESET = `UPDATE skill_versions SET status = ?, baseline_rate = ?, trial_uses = 0, trial_successes = 0,
  uses = 0, successes = 0, last_used_at = NULL, content = COALESCE(?, content), updated_at = ? WHERE id = ?`;
const SET_STATUS = "UPDATE skill_versions SET status = ?, updated_at = ? WHERE id = ?";
const INSERT =
  "INSERT INTO skill_versions (agent_id, skill_name, tag, version, status, content, bullets, created_at, updated_at) VALUES (?, ?, ?, ?, 'candidate', ?, ?, ?, ?) RETURNING id";
const INSERT_REQUEST = "INSERT INTO skill_distill_requests (agent_id, tag, requested_at) VALUES (?, ?, ?) RETURNING id";
const PENDING_REQUESTS =
  "SELECT id, agent_id AS agentId, tag FROM skill_distill_requests WHERE handled_at IS NULL ORDER BY id";
const REQUESTS =
  "SELECT id, tag, requested_at AS requestedAt, handled_at AS handledAt, outcome FROM skill_distill_requests WHERE agent_id = ? ORDER BY id";
const HANDLE_REQUEST = "UPDATE skill_distill_requests SET handled_at = ?, outcome = ? WHERE id = ?";
const CLAIM_REQUEST =
  "UPDATE skill_distill_requests SET handled_at = ?, outcome = 'running' WHERE id = ? AND handled_at IS NULL";
const USE = "UPDATE skill_versions SET uses = uses + 1, successes = successes + ?, last_used_at = ? WHERE id = ?";
const SET_CONTENT =
  "UPDATE skill_versions SET content = ?, bullets = COALESCE(?, bullets), updated_at = ? WHERE id = ?";
const SET_CONTENT_RESET =
  "UPDATE skill_versions SET content = ?, bullets = COALESCE(?, bullets), uses = 0, successes = 0, last_used_at = NULL, updated_at = ? WHERE id = ?";
const START_UNUSED_CLOCK = "UPDATE skill_versions SET last_used_at = ? WHERE id = ? AND last_used_at IS NULL";
const TRIAL_USE =
  "UPDATE skill_versions SET trial_uses = trial_uses + 1, trial_successes = trial_successes + ? WHERE id = ?";

export function createSkillVersionsStore(sql: SqlDriver, clock: Clock, ledger: LedgerStore) {
  const byId = (id: number): Promise<SkillVersion | undefined> => sql.get<SkillVersion>(BY_ID, [id]);
  const ofSkill = (agentId: string, skillName: string): Promise<SkillVersion[]> =>
    sql.all<SkillVersion>(OF_SKILL, [agentId, skillName]);
  const view = (row: SkillVersion) => ({
    version: row.version,
    status: row.status,
    bullets: row.bullets,
    trialUses: row.trialUses,
    trialSuccesses: row.trialSuccesses,
    baselineRate: row.baselineRate,
    uses: row.uses,
    successes: row.successes,
    lastUsedAt: row.lastUsedAt,
  });
  /** One update of a version and its ledger entry (state before and after), in one transaction. */
  const changeLedgered = (
    id: number,
    update: () => Promise<unknown>,
    entry: { action: string; reason: string; actor: string; from?: string; to?: string },
  ): Promise<SkillVersion> =>
    sql.transaction(async () => {
      const before = await byId(id);
      if (!before) throw new Error(`no skill version ${id}`);
      await update();
      const after = (await byId(id)) as SkillVersion;
      await ledger.append({
        agentId: before.agentId,
        subject: "skill",
        subjectId: `${before.skillName}@v${before.version}`,
        action: entry.action,
        before: entry.from === undefined ? view(before) : { ...view(before), state: entry.from },
        after: entry.to === undefined ? view(after) : { ...view(after), state: entry.to },
        reason: entry.reason,
        actor: entry.actor,
      });
      return after;
    });
  const setStatus = (
    id: number,
    status: SkillVersionStatus,
    entry: { action: string; reason: string; actor: string },
    reset?: { baselineRate: number | null; content?: string },
  ): Promise<SkillVersion> =>
    changeLedgered(
      id,
      () =>
        reset
          ? sql.run(SET_STATUS_RESET, [status, reset.baselineRate, reset.content ?? null, clock.now(), id])
          : sql.run(SET_STATUS, [status, clock.now(), id]),
      entry,
    );
  return {
    add: (input: {
      agentId: string;
      skillName: string;
      tag: string;
      content: string;
      bullets: number;
      actor: string;
    }): Promise<SkillVersion> =>
      sql.transaction(async () => {
        const version = ((await ofSkill(input.agentId, input.skillName)).at(-1)?.version ?? 0) + 1;
        const now = clock.now();
        const id = Number(
          (
            await sql.get<{ id: number }>(INSERT, [
              input.agentId,
              input.skillName,
              input.tag,
              version,
              input.content,
              input.bullets,
              now,
              now,
            ])
          )?.id,
        );
        const row = (await byId(id)) as SkillVersion;
        await ledger.append({
          agentId: input.agentId,
          subject: "skill",
          subjectId: `${input.skillName}@v${version}`,
          action: "candidate",
          after: view(row),
          actor: input.actor,
        });
        return row;
      }),
    get: byId,
    versions: ofSkill,
    all: (agentId: string): Promise<SkillVersion[]> => sql.all<SkillVersion>(OF_AGENT, [agentId]),
    active: async (agentId: string, skillName: string): Promise<SkillVersion | undefined> =>
      (await ofSkill(agentId, skillName)).find((row) => row.status === "active"),
    setStatus,
    /** `laoding experiences distill <tag>`: queued here, done by the running bot. */
    requestDistill: async (agentId: string, tag: string): Promise<number> =>
      Number((await sql.get<{ id: number }>(INSERT_REQUEST, [agentId, tag, clock.now()]))?.id),
    pendingRequests: (): Promise<{ id: number; agentId: string; tag: string }[]> =>
      sql.all<{ id: number; agentId: string; tag: string }>(PENDING_REQUESTS),
    requests: (
      agentId: string,
    ): Promise<{ id: number; tag: string; requestedAt: number; handledAt: number | null; outcome: string | null }[]> =>
      sql.all<{ id: number; tag: string; requestedAt: number; handledAt: number | null; outcome: string | null }>(
        REQUESTS,
        [agentId],
      ),
    /** Takes a pending request for this process (one replica handles it); false when another took it first. */
    claimRequest: async (id: number): Promise<boolean> =>
      (await sql.run(CLAIM_REQUEST, [clock.now(), id])).changes === 1,
    handleRequest: async (id: number, outcome: string): Promise<void> =>
      void (await sql.run(HANDLE_REQUEST, [clock.now(), outcome, id])),
    /** One task with an outcome used the live version: its lifecycle's evidence. */
    recordUse: async (id: number, success: boolean, at: number): Promise<SkillVersion> => {
      await sql.run(USE, [success ? 1 : 0, at, id]);
      return (await byId(id)) as SkillVersion;
    },
    /** A version used before uses were counted starts its unused time now (it was in use, nobody knows when). */
    startUnusedClock: async (id: number, at: number): Promise<void> =>
      void (await sql.run(START_UNUSED_CLOCK, [at, id])),
    /**
     * The live version's lifecycle changed (its SKILL.md's `status:`): its text, and the
     * ledger with the state before and after and why. `restart` starts its counters afresh;
     * `bullets` is the text's new bullet count when bullets were retracted from it.
     */
    setLifecycle: (
      id: number,
      content: string,
      entry: {
        action: string;
        reason: string;
        actor: string;
        from: string;
        to: string;
        restart?: boolean;
        bullets?: number;
      },
    ): Promise<SkillVersion> =>
      changeLedgered(
        id,
        () =>
          sql.run(entry.restart ? SET_CONTENT_RESET : SET_CONTENT, [content, entry.bullets ?? null, clock.now(), id]),
        entry,
      ),
    recordTrialUse: async (id: number, success: boolean): Promise<SkillVersion> => {
      await sql.run(TRIAL_USE, [success ? 1 : 0, id]);
      return (await byId(id)) as SkillVersion;
    },
  };
}
