/**
 * Reads the Go bot's SQLite database, read-only, into plain rows: its `messages` and
 * `capability_gaps` tables, columns recognised by name (column-aliases.ts), times
 * converted (time-value.ts). Each row carries an import key (table, rowid and a hash of
 * the values read) so a second import recognises what it already brought in.
 */
import { createHash } from "node:crypto";
import Database from "better-sqlite3";
import { GO_GAPS, GO_MESSAGES, GoSchemaError, matchColumns, type TableSpec } from "./column-aliases.js";
import { toEpochMs } from "./time-value.js";

export type GoMessage = {
  importKey: string;
  rowId: number;
  chatId: string;
  role: "user" | "assistant";
  content: string;
  createdAt: number;
  traceId?: string;
  userId?: string;
  hash: string;
};
export type GoGap = {
  importKey: string;
  rowId: number;
  intent: string;
  reason: string;
  createdAt: number;
  traceId?: string;
  userText?: string;
  chatId?: string;
  detail?: string;
  tool?: string;
  userId?: string;
  hash: string;
};
export type SkippedRow = { table: string; rowId: number; reason: string };

export type GoTableRead = {
  table: string;
  found: boolean;
  recognised: string[];
  skippedColumns: string[];
  rows: number;
};

export type GoDatabase = {
  file: string;
  messages: GoMessage[];
  gaps: GoGap[];
  skippedRows: SkippedRow[];
  tables: GoTableRead[];
  /** Tables of the Go database neither read nor known (listed in the plan as skipped). */
  otherTables: string[];
};

const CHAT_ROLES: Record<string, "user" | "assistant"> = {
  user: "user",
  human: "user",
  assistant: "assistant",
  bot: "assistant",
  ai: "assistant",
  model: "assistant",
};

export function readGoDatabase(file: string, options: { skipTables?: string[] } = {}): GoDatabase {
  let db: Database.Database;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
  } catch (error) {
    throw new GoSchemaError(`cannot open the Go database ${file}: ${(error as Error).message}`);
  }
  try {
    const names = db
      .prepare<[], { name: string }>(
        `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`,
      )
      .all()
      .map((row) => row.name);
    const skipTables = new Set(options.skipTables ?? []);
    const result: GoDatabase = { file, messages: [], gaps: [], skippedRows: [], tables: [], otherTables: [] };
    const read = (spec: TableSpec) => {
      const actual = spec.tableAliases
        .map((alias) => names.find((name) => name.toLowerCase() === alias))
        .find((name) => name !== undefined);
      if (!actual || skipTables.has(actual)) {
        result.tables.push({ table: actual ?? spec.table, found: false, recognised: [], skippedColumns: [], rows: 0 });
        return undefined;
      }
      const columnNames = db
        .prepare<[string], { name: string }>(`SELECT name FROM pragma_table_info(?)`)
        .all(actual)
        .map((row) => row.name);
      const match = matchColumns(spec, actual, columnNames);
      const rows = db
        .prepare(`SELECT rowid AS "__rowid", * FROM "${actual.replace(/"/g, '""')}" ORDER BY rowid`)
        .all() as Record<string, unknown>[];
      result.tables.push({
        table: actual,
        found: true,
        recognised: match.recognised,
        skippedColumns: match.skipped,
        rows: rows.length,
      });
      return {
        actual,
        rows,
        pick: (row: Record<string, unknown>, field: string) =>
          match.columns[field] === undefined ? undefined : row[match.columns[field] as string],
      };
    };
    const messages = read(GO_MESSAGES);
    for (const row of messages?.rows ?? []) {
      const rowId = Number(row.__rowid);
      const pick = (field: string) => messages?.pick(row, field);
      const skip = (reason: string) => result.skippedRows.push({ table: messages?.actual as string, rowId, reason });
      const roleText = (textOf(pick("role")) ?? "").trim().toLowerCase();
      const role = CHAT_ROLES[roleText];
      const createdAt = toEpochMs(pick("time"));
      const content = textOf(pick("content"));
      const chatId = textOf(pick("chat"));
      if (!role) skip(`role "${roleText}" is not chat history (only user and assistant turns are imported)`);
      else if (createdAt === undefined)
        skip(`time ${JSON.stringify(pick("time"))} is neither unix seconds, milliseconds nor an ISO time`);
      else if (!chatId) skip("no chat id");
      else if (content === undefined) skip("no content");
      else {
        const values = {
          chatId,
          role,
          content,
          createdAt,
          traceId: textOf(pick("traceId")),
          userId: textOf(pick("userId")),
        };
        const hash = hashOf(values);
        result.messages.push({
          ...definedOnly(values),
          rowId,
          hash,
          importKey: `${messages?.actual}:${rowId}:${hash.slice(0, 16)}`,
        } as GoMessage);
      }
    }
    const gaps = read(GO_GAPS);
    for (const row of gaps?.rows ?? []) {
      const rowId = Number(row.__rowid);
      const pick = (field: string) => gaps?.pick(row, field);
      const createdAt = toEpochMs(pick("time"));
      const intent = textOf(pick("intent"));
      const reason = textOf(pick("reason"));
      const skip = (why: string) => result.skippedRows.push({ table: gaps?.actual as string, rowId, reason: why });
      if (createdAt === undefined)
        skip(`time ${JSON.stringify(pick("time"))} is neither unix seconds, milliseconds nor an ISO time`);
      else if (!intent) skip("no intent key");
      else if (!reason) skip("no reason");
      else {
        const values = {
          intent,
          reason,
          createdAt,
          traceId: textOf(pick("traceId")),
          userText: textOf(pick("userText")),
          chatId: textOf(pick("chat")),
          detail: textOf(pick("detail")),
          tool: textOf(pick("tool")),
          userId: textOf(pick("userId")),
        };
        const hash = hashOf(values);
        result.gaps.push({
          ...definedOnly(values),
          rowId,
          hash,
          importKey: `${gaps?.actual}:${rowId}:${hash.slice(0, 16)}`,
        } as GoGap);
      }
    }
    const read$ = new Set(result.tables.filter((table) => table.found).map((table) => table.table));
    result.otherTables = names.filter((name) => !read$.has(name));
    return result;
  } finally {
    db.close();
  }
}

function textOf(value: unknown): string | undefined {
  if (value === null || value === undefined) return undefined;
  // SQLite gives text, numbers, bigints or blobs; nothing else reaches here.
  const text = Buffer.isBuffer(value) ? value.toString("utf8") : String(value as string | number | bigint);
  return text.trim() === "" ? undefined : text;
}

function hashOf(values: Record<string, unknown>): string {
  return createHash("sha256").update(JSON.stringify(values)).digest("hex");
}

function definedOnly<T extends Record<string, unknown>>(values: T): T {
  return Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined)) as T;
}
