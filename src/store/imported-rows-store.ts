/**
 * Which source rows an import already brought in (`laoding import go`): one row per source
 * row, keyed by agent, source and import key, so a second run of the same import adds
 * nothing. `target_id` is the row it became (NULL for a source row skipped on purpose).
 */
import type { Clock } from "./clock.js";
import type { SqlDriver } from "./sql/sql-driver.js";

export type ImportedRow = {
  agentId: string;
  source: string;
  importKey: string;
  targetTable: string;
  targetId: number | null;
  contentSha256: string;
};

export type ImportedRowsStore = ReturnType<typeof createImportedRowsStore>;

const INSERT = `INSERT INTO imported_rows (agent_id, source, import_key, target_table, target_id, content_sha256, imported_at)
  VALUES (@agentId, @source, @importKey, @targetTable, @targetId, @contentSha256, @importedAt)
  ON CONFLICT (agent_id, source, import_key) DO NOTHING`;
const FIND = `SELECT agent_id AS agentId, source, import_key AS importKey, target_table AS targetTable, target_id AS targetId, content_sha256 AS contentSha256
  FROM imported_rows WHERE agent_id = ? AND source = ? AND import_key = ?`;
const COUNT = `SELECT count(*) AS count FROM imported_rows WHERE agent_id = ? AND source = ? AND target_table = ?`;

export function createImportedRowsStore(sql: SqlDriver, clock: Clock) {
  return {
    /** Remembers a source row; false when it was already there. */
    remember: async (row: ImportedRow): Promise<boolean> =>
      (
        await sql.run(INSERT, {
          agentId: row.agentId,
          source: row.source,
          importKey: row.importKey,
          targetTable: row.targetTable,
          targetId: row.targetId,
          contentSha256: row.contentSha256,
          importedAt: clock.now(),
        })
      ).changes === 1,
    find: (agentId: string, source: string, importKey: string): Promise<ImportedRow | undefined> =>
      sql.get<ImportedRow>(FIND, [agentId, source, importKey]),
    count: async (agentId: string, source: string, targetTable: string): Promise<number> =>
      (await sql.get<{ count: number }>(COUNT, [agentId, source, targetTable]))?.count ?? 0,
  };
}
