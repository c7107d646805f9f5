/**
 * Every table the numbered migrations create (src/store/migrations.ts), in an order where a
 * table comes after the tables it references: `laoding db copy` fills them in this order and
 * `laoding db status` counts them. A migration that adds a table adds it here too
 * (test/store/copy-database.test.ts compares this list with a migrated database). PostgreSQL's
 * own `schema_version` bookkeeping table is not a store table.
 */
export const STORE_TABLES = [
  // version 1
  "sessions",
  "messages", // → sessions
  "capability_gaps", // → sessions
  "tool_calls",
  // version 2
  "model_calls",
  // version 3
  "intent_keys",
  "skill_drafts",
  // version 4
  "agent_settings",
  // version 5
  "channel_seen",
  "channel_inbox",
  "channel_outbox", // → channel_inbox
  // version 6
  "experiences",
  "experience_tags", // → experiences
  "experience_injections", // → experiences
  "distill_runs",
  "memory_ledger",
  "skill_versions",
  "skill_distill_requests",
  "rules",
  // version 8
  "imported_rows",
  // version 9
  "leases",
  "replicas",
  // version 12
  "channel_streams", // → channel_inbox
] as const;

export type StoreTable = (typeof STORE_TABLES)[number];
