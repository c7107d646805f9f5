/** The store's public face: one object holding every repository over one database. */
import { createAgentSettingsStore, type AgentSettingsStore } from "./agent-settings-store.js";
import { createChannelStore, type ChannelStore } from "./channel-store.js";
import type { Clock } from "./clock.js";
import { createDistillRunsStore, type DistillRunsStore } from "./distill-runs-store.js";
import { createExperiencesStore, type ExperiencesStore } from "./experiences-store.js";
import { createInjectionsStore, type InjectionsStore } from "./injections-store.js";
import { createLedgerStore, type LedgerStore } from "./ledger-store.js";
import { createRulesStore, type RulesStore } from "./rules-store.js";
import { createSkillVersionsStore, type SkillVersionsStore } from "./skill-versions-store.js";
import { createGapClustersStore, type GapClustersStore } from "./gap-clusters-store.js";
import { createGapsStore, type GapsStore } from "./gaps-store.js";
import { createImportedRowsStore, type ImportedRowsStore } from "./imported-rows-store.js";
import { createMessagesStore, type MessagesStore } from "./messages-store.js";
import { createModelCallsStore, type ModelCallsStore } from "./model-calls-store.js";
import { openDatabase, type Db } from "./open-database.js";
import { createSessionsStore, type SessionsStore } from "./sessions-store.js";
import { createToolCallsStore, type ToolCallsStore } from "./tool-calls-store.js";

export type Store = {
  db: Db;
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
  close(): void;
};

export function openStore(file: string, clock: Clock): Store {
  const db = openDatabase({ file });
  let closed = false;
  const ledger = createLedgerStore(db, clock);
  const toolCalls = createToolCallsStore(db, clock);
  const unhook = flushOnExit(() => toolCalls.flush());
  return {
    db,
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
    close() {
      if (closed) return;
      closed = true;
      unhook();
      try {
        toolCalls.flush();
      } finally {
        db.close();
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
