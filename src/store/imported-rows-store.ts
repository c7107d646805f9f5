/**
 * Which source rows an import already brought in (`laoding import go`): one row per source
 * row, keyed by agent, source and import key, so a second run of the same import adds
 * nothing. `target_id` is the row it became (NULL for a source row skipped on purpose).
 */
import type { Clock } from "./clock.js";
import type { Db } from "./open-database.js";

export type ImportedRow = { agentId: string; source: string; importKey: string; targetTable: string; targetId: number | null; contentSha256: string };

export type ImportedRowsStore = ReturnType<typeof createImportedRowsStore>;

export function createImportedRowsStore(db: Db, clock: Clock) {
  const insert = db.prepare(
    `INSERT OR IGNORE INTO imported_rows (agent_id, source, import_key, target_table, target_id, content_sha256, imported_at)
     VALUES (@agentId, @source, @importKey, @targetTable, @targetId, @contentSha256, @importedAt)`,
  );
  const find = db.prepare<[string, string, string], ImportedRow>(
    `SELECT agent_id AS agentId, source, import_key AS importKey, target_table AS targetTable, target_id AS targetId, content_sha256 AS contentSha256
     FROM imported_rows WHERE agent_id = ? AND source = ? AND import_key = ?`,
  );
  const count = db.prepare<[string, string, string], { count: number }>(`SELECT count(*) AS count FROM imported_rows WHERE agent_id = ? AND source = ? AND target_table = ?`);
  return {
    /** Remembers a source row; false when it was already there. */
    remember: (row: ImportedRow): boolean => insert.run({ ...row, importedAt: clock.now() }).changes === 1,
    find: (agentId: string, source: string, importKey: string): ImportedRow | undefined => find.get(agentId, source, importKey),
    count: (agentId: string, source: string, targetTable: string): number => count.get(agentId, source, targetTable)?.count ?? 0,
  };
}
