/**
 * Per-agent run-time overrides of agents.json (`agent_settings`). A NULL column means
 * "as agents.json says"; the running bot reads them at every message, so a change made by
 * `laoding library enable|disable` (another process, same WAL database) takes effect at
 * the agent's next message without a restart.
 */
import type { Clock } from "./clock.js";
import type { Db } from "./open-database.js";

export type AgentSettingsStore = ReturnType<typeof createAgentSettingsStore>;

export function createAgentSettingsStore(db: Db, clock: Clock) {
  const libraryOf = db.prepare<[string], { enabled: number | null }>("SELECT experience_library_enabled AS enabled FROM agent_settings WHERE agent_id = ?");
  const setLibrary = db.prepare(
    `INSERT INTO agent_settings (agent_id, experience_library_enabled, updated_at) VALUES (?, ?, ?)
     ON CONFLICT (agent_id) DO UPDATE SET experience_library_enabled = excluded.experience_library_enabled, updated_at = excluded.updated_at`,
  );
  return {
    /** The library override of an agent: true, false, or undefined when agents.json decides. */
    experienceLibrary(agentId: string): boolean | undefined {
      const row = libraryOf.get(agentId);
      return row?.enabled === null || row?.enabled === undefined ? undefined : row.enabled === 1;
    },
    /** Sets (true/false) or clears (undefined) the override. */
    setExperienceLibrary(agentId: string, enabled: boolean | undefined): void {
      setLibrary.run(agentId, enabled === undefined ? null : enabled ? 1 : 0, clock.now());
    },
  };
}
