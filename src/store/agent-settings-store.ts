/**
 * Per-agent run-time overrides of agents.json (`agent_settings`). A NULL column means
 * "as agents.json says"; the running bot reads them at every message, so a change made by
 * `laoding library enable|disable` (another process, same WAL database) takes effect at
 * the agent's next message without a restart.
 */
import type { Clock } from "./clock.js";
import type { SqlDriver } from "./sql/sql-driver.js";

export type AgentSettingsStore = ReturnType<typeof createAgentSettingsStore>;

const LIBRARY_OF = "SELECT experience_library_enabled AS enabled FROM agent_settings WHERE agent_id = ?";
const SET_LIBRARY = `INSERT INTO agent_settings (agent_id, experience_library_enabled, updated_at) VALUES (?, ?, ?)
  ON CONFLICT (agent_id) DO UPDATE SET experience_library_enabled = excluded.experience_library_enabled, updated_at = excluded.updated_at`;

export function createAgentSettingsStore(sql: SqlDriver, clock: Clock) {
  return {
    /** The library override of an agent: true, false, or undefined when agents.json decides. */
    async experienceLibrary(agentId: string): Promise<boolean | undefined> {
      const row = await sql.get<{ enabled: number | null }>(LIBRARY_OF, [agentId]);
      return row?.enabled === null || row?.enabled === undefined ? undefined : row.enabled === 1;
    },
    /** Sets (true/false) or clears (undefined) the override. */
    async setExperienceLibrary(agentId: string, enabled: boolean | undefined): Promise<void> {
      await sql.run(SET_LIBRARY, [agentId, enabled === undefined ? null : enabled ? 1 : 0, clock.now()]);
    },
  };
}
