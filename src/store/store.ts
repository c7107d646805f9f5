/** The store's public face: one object holding every repository over one database. */
import { createAgentSettingsStore, type AgentSettingsStore } from "./agent-settings-store.js";
import { createChannelStore, type ChannelStore } from "./channel-store.js";
import type { Clock } from "./clock.js";
import { createGapClustersStore, type GapClustersStore } from "./gap-clusters-store.js";
import { createGapsStore, type GapsStore } from "./gaps-store.js";
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
  close(): void;
};

export function openStore(file: string, clock: Clock): Store {
  const db = openDatabase({ file });
  let closed = false;
  return {
    db,
    sessions: createSessionsStore(db, clock),
    messages: createMessagesStore(db, clock),
    gaps: createGapsStore(db, clock),
    clusters: createGapClustersStore(db, clock),
    toolCalls: createToolCallsStore(db, clock),
    modelCalls: createModelCallsStore(db, clock),
    agentSettings: createAgentSettingsStore(db, clock),
    channels: createChannelStore(db, clock),
    close() {
      if (closed) return;
      closed = true;
      db.close();
    },
  };
}
