/**
 * The Go bot's tables, recognised by column name rather than by a fixed schema (its
 * schema changed between versions and we never had its source): each field we need has a
 * few accepted names. A table lacking a required field is refused, naming the field and
 * the names tried; columns matching no field are reported as skipped.
 */

export type FieldSpec = { field: string; aliases: readonly string[]; required: boolean };
export type TableSpec = { table: string; tableAliases: readonly string[]; fields: readonly FieldSpec[] };

export const GO_MESSAGES: TableSpec = {
  table: "messages",
  tableAliases: ["messages", "chat_messages", "message"],
  fields: [
    { field: "chat", aliases: ["chat_id", "session_id", "conversation_id"], required: true },
    { field: "role", aliases: ["role", "sender_role"], required: true },
    { field: "content", aliases: ["content", "text", "message"], required: true },
    { field: "time", aliases: ["created_at", "time", "timestamp", "ts"], required: true },
    { field: "traceId", aliases: ["trace_id", "traceid"], required: false },
    { field: "userId", aliases: ["user_id", "sender_id", "from_id"], required: false },
  ],
};

export const GO_GAPS: TableSpec = {
  table: "capability_gaps",
  tableAliases: ["capability_gaps", "capability_gap", "gaps"],
  fields: [
    { field: "intent", aliases: ["intent_key", "intent"], required: true },
    { field: "reason", aliases: ["reason", "gap_reason"], required: true },
    { field: "time", aliases: ["created_at", "time", "timestamp", "ts"], required: true },
    { field: "traceId", aliases: ["trace_id", "traceid"], required: false },
    { field: "userText", aliases: ["user_message", "user_text", "message", "text"], required: false },
    { field: "chat", aliases: ["chat_id", "session_id", "conversation_id"], required: false },
    { field: "detail", aliases: ["detail", "error", "error_message"], required: false },
    { field: "tool", aliases: ["tool", "tool_name"], required: false },
    { field: "userId", aliases: ["user_id", "sender_id", "from_id"], required: false },
  ],
};

/** The source row id: read from SQLite's rowid, so an `id` column is recognised, not skipped. */
const ROW_ID_NAMES = new Set(["id", "rowid"]);

export type ColumnMatch = {
  /** field -> the Go column that holds it. */
  columns: Record<string, string>;
  /** "field <- column" lines for the plan. */
  recognised: string[];
  skipped: string[];
};

export class GoSchemaError extends Error {
  override readonly name = "GoSchemaError";
}

/** Matches a table's columns to the spec's fields; throws GoSchemaError naming a missing required field. */
export function matchColumns(spec: TableSpec, actualTable: string, columnNames: string[]): ColumnMatch {
  const byLower = new Map(columnNames.map((name) => [name.toLowerCase(), name]));
  const columns: Record<string, string> = {};
  const used = new Set<string>();
  for (const field of spec.fields) {
    const found = field.aliases
      .map((alias) => byLower.get(alias))
      .find((name) => name !== undefined && !used.has(name));
    if (found) {
      columns[field.field] = found;
      used.add(found);
    } else if (field.required) {
      throw new GoSchemaError(
        `the Go database's table "${actualTable}" has no column for ${field.field} (tried ${field.aliases.join(", ")}; it has ${columnNames.join(", ")}). Rename the column in a copy of the database, or leave the table out with --skip-table ${actualTable}`,
      );
    }
  }
  return {
    columns,
    recognised: Object.entries(columns).map(([field, column]) => `${field} <- ${column}`),
    skipped: columnNames.filter((name) => !used.has(name) && !ROW_ID_NAMES.has(name.toLowerCase())),
  };
}
