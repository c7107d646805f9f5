/** The store's public face: one object holding every repository over one database. */
import { createAgentSettingsStore, type AgentSettingsStore } from "./agent-settings-store.js";
import { createChannelStore, type ChannelStore } from "./channel-store.js";
import { createChatWorkStore, type ChatWorkStore } from "./chat-work-store.js";
import type { Clock } from "./clock.js";
import { createDistillRunsStore, type DistillRunsStore } from "./distill-runs-store.js";
import { createExperiencesStore, type ExperiencesStore } from "./experiences-store.js";
import { createInjectionsStore, type InjectionsStore } from "./injections-store.js";
import { createLeasesStore, type LeasesStore } from "./leases-store.js";
import { createLedgerStore, type LedgerStore } from "./ledger-store.js";
import { createReplicasStore, type ReplicasStore } from "./replicas-store.js";
import { createRulesStore, type RulesStore } from "./rules-store.js";
import { createSkillVersionsStore, type SkillVersionsStore } from "./skill-versions-store.js";
import { createGapClustersStore, type GapClustersStore } from "./gap-clusters-store.js";
import { createGapsStore, type GapsStore } from "./gaps-store.js";
import { createImportedRowsStore, type ImportedRowsStore } from "./imported-rows-store.js";
import { createMessagesStore, type MessagesStore } from "./messages-store.js";
import { createModelCallsStore, type ModelCallsStore } from "./model-calls-store.js";
import { isPostgresUrl } from "./sql/database-url.js";
import { migrate } from "./sql/migrate.js";
import { openPostgresDriver } from "./sql/postgres-driver.js";
import type { Engine, SqlDriver, TransactionOptions } from "./sql/sql-driver.js";
import { openSqliteDriver } from "./sql/sqlite-driver.js";
import { createSessionsStore, type SessionsStore } from "./sessions-store.js";
import { createToolCallsStore, type ToolCallsStore } from "./tool-calls-store.js";

export type Store = {
  /** The engine under every repository (SQLite file or PostgreSQL pool). */
  sql: SqlDriver;
  engine: Engine;
  /**
   * Runs `work` in one transaction; every repository call from its async context joins it.
   * `lock` names what the work reads then changes, so replicas on PostgreSQL take turns on it.
   */
  transaction<T>(work: () => Promise<T>, options?: TransactionOptions): Promise<T>;
  sessions: SessionsStore;
  messages: MessagesStore;
  gaps: GapsStore;
  clusters: GapClustersStore;
  toolCalls: ToolCallsStore;
  modelCalls: ModelCallsStore;
  agentSettings: AgentSettingsStore;
  channels: ChannelStore;
  experiences: ExperiencesStore;
  injections: InjectionsStore;
  distillRuns: DistillRunsStore;
  ledger: LedgerStore;
  rules: RulesStore;
  skillVersions: SkillVersionsStore;
  importedRows: ImportedRowsStore;
  leases: LeasesStore;
  chatWork: ChatWorkStore;
  replicas: ReplicasStore;
  close(): Promise<void>;
};

export type OpenStoreOptions = {
  /** Hears of a pooled PostgreSQL connection the server dropped while idle (the next query opens another). */
  onIdleError?: (error: Error) => void;
  /** Pool size on PostgreSQL. */
  maxConnections?: number;
};

/**
 * Opens the store at `target` — a `postgres://` URL (DATABASE_URL) or the SQLite file's
 * path — and brings its schema up to date.
 */
export async function openStore(target: string, clock: Clock, options: OpenStoreOptions = {}): Promise<Store> {
  const db = isPostgresUrl(target)
    ? await openPostgresDriver({
        url: target,
        ...(options.onIdleError ? { onIdleError: options.onIdleError } : {}),
        ...(options.maxConnections ? { maxConnections: options.maxConnections } : {}),
      })
    : openSqliteDriver({ file: target });
  try {
    await migrate(db);
  } catch (error) {
    await db.close();
    throw error;
  }
  let closed = false;
  const ledger = createLedgerStore(db, clock);
  const toolCalls = createToolCallsStore(db, clock);
  const unhook = flushOnExit(() => toolCalls.flushSync());
  return {
    sql: db,
    engine: db.engine,
    transaction: (work, transactionOptions) => db.transaction(work, transactionOptions),
    sessions: createSessionsStore(db, clock),
    messages: createMessagesStore(db, clock),
    gaps: createGapsStore(db, clock),
    clusters: createGapClustersStore(db, clock),
    toolCalls,
    modelCalls: createModelCallsStore(db, clock),
    agentSettings: createAgentSettingsStore(db, clock),
    channels: createChannelStore(db, clock),
    experiences: createExperiencesStore(db, clock, ledger),
    injections: createInjectionsStore(db, clock),
    distillRuns: createDistillRunsStore(db, clock),
    ledger,
    rules: createRulesStore(db, clock, ledger),
    skillVersions: createSkillVersionsStore(db, clock, ledger),
    importedRows: createImportedRowsStore(db, clock),
    leases: createLeasesStore(db, clock),
    chatWork: createChatWorkStore(db, clock),
    replicas: createReplicasStore(db, clock),
    async close() {
      if (closed) return;
      closed = true;
      unhook();
      try {
        await toolCalls.flush();
      } finally {
        await db.close();
      }
    },
  };
}

/** Open stores' queued writes, made when the process exits (process.exit, an uncaught error) with a store still open. */
const exitFlushes = new Set<() => void>();

function flushOnExit(flush: () => void): () => void {
  if (exitFlushes.size === 0) process.on("exit", flushAllOnExit);
  exitFlushes.add(flush);
  return () => {
    exitFlushes.delete(flush);
    if (exitFlushes.size === 0) process.off("exit", flushAllOnExit);
  };
}

function flushAllOnExit(): void {
  for (const flush of exitFlushes) {
    try {
      flush();
    } catch {
      // The process is going away; one store's failure must not keep the others from writing.
    }
  }
}
