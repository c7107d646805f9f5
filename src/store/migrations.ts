/**
 * Numbered schema migrations. A migration is never edited once released: add a new one.
 * Times are stored as integer milliseconds since the epoch.
 */
export type Migration = {
  version: number;
  name: string;
  /** SQLite's text; PostgreSQL runs it through toPostgresSchema (INTEGER → BIGINT, row ids → identity columns). */
  sql: string;
  /** PostgreSQL's own text, only where a statement cannot be shared. */
  postgres?: string;
};

export const MIGRATIONS: Migration[] = [
  {
    version: 1,
    name: "sessions, messages, capability gaps, tool call audit",
    sql: `
      CREATE TABLE sessions (
        id INTEGER PRIMARY KEY,
        agent_id TEXT NOT NULL,
        channel TEXT NOT NULL,
        chat_id TEXT NOT NULL,
        status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'closed')),
        summary TEXT,
        summary_until_message_id INTEGER,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      );
      CREATE UNIQUE INDEX sessions_one_active ON sessions (agent_id, channel, chat_id) WHERE status = 'active';

      CREATE TABLE messages (
        id INTEGER PRIMARY KEY,
        session_id INTEGER NOT NULL REFERENCES sessions (id),
        role TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'tool', 'system')),
        kind TEXT NOT NULL DEFAULT 'chat' CHECK (kind IN ('chat', 'scratch', 'command')),
        content TEXT NOT NULL,
        tool_calls TEXT,
        tool_call_id TEXT,
        trace_id TEXT NOT NULL,
        user_id TEXT,
        dedupe_key TEXT,
        created_at INTEGER NOT NULL
      );
      CREATE INDEX messages_by_session ON messages (session_id, id);
      CREATE INDEX messages_by_trace ON messages (trace_id);
      CREATE UNIQUE INDEX messages_dedupe ON messages (dedupe_key) WHERE dedupe_key IS NOT NULL;

      CREATE TABLE capability_gaps (
        id INTEGER PRIMARY KEY,
        agent_id TEXT NOT NULL,
        session_id INTEGER REFERENCES sessions (id),
        trace_id TEXT NOT NULL,
        intent_key TEXT NOT NULL,
        reason TEXT NOT NULL,
        class TEXT NOT NULL CHECK (class IN ('capability', 'environment')),
        tool TEXT,
        error_code TEXT,
        detail TEXT,
        user_text TEXT,
        user_id TEXT,
        created_at INTEGER NOT NULL
      );
      CREATE INDEX gaps_cluster ON capability_gaps (agent_id, intent_key, reason, created_at);
      CREATE INDEX gaps_recent ON capability_gaps (agent_id, created_at);
      CREATE INDEX gaps_by_trace ON capability_gaps (trace_id);

      CREATE TABLE tool_calls (
        id INTEGER PRIMARY KEY,
        trace_id TEXT,
        agent_id TEXT NOT NULL,
        session_id INTEGER,
        tool TEXT NOT NULL,
        args_digest TEXT NOT NULL,
        ok INTEGER NOT NULL,
        error_code TEXT,
        duration_ms INTEGER NOT NULL,
        created_at INTEGER NOT NULL
      );
      CREATE INDEX tool_calls_by_trace ON tool_calls (trace_id);
    `,
  },
  {
    version: 2,
    name: "model call usage",
    sql: `
      CREATE TABLE model_calls (
        id INTEGER PRIMARY KEY,
        trace_id TEXT,
        agent_id TEXT,
        purpose TEXT NOT NULL,
        model TEXT NOT NULL,
        prompt_tokens INTEGER,
        completion_tokens INTEGER,
        total_tokens INTEGER,
        ok INTEGER NOT NULL,
        error_kind TEXT,
        duration_ms INTEGER NOT NULL,
        created_at INTEGER NOT NULL
      );
      CREATE INDEX model_calls_by_trace ON model_calls (trace_id);
      CREATE INDEX model_calls_by_time ON model_calls (created_at);
    `,
  },
  {
    version: 3,
    name: "gap clustering: intent key registry, skill drafts",
    sql: `
      ALTER TABLE capability_gaps ADD COLUMN raw_intent_key TEXT;

      CREATE TABLE intent_keys (
        agent_id TEXT NOT NULL,
        intent_key TEXT NOT NULL,
        signature TEXT NOT NULL,
        last_seen INTEGER NOT NULL,
        PRIMARY KEY (agent_id, intent_key)
      );
      CREATE INDEX intent_keys_by_signature ON intent_keys (agent_id, signature);
      CREATE INDEX intent_keys_recent ON intent_keys (agent_id, last_seen);

      CREATE TABLE skill_drafts (
        id INTEGER PRIMARY KEY,
        agent_id TEXT NOT NULL,
        intent_key TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('drafting', 'drafted', 'linked', 'rejected')),
        skill_name TEXT,
        path TEXT,
        cluster_size INTEGER NOT NULL,
        reason TEXT,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      );
      CREATE UNIQUE INDEX skill_drafts_one_per_intent ON skill_drafts (agent_id, intent_key);
    `,
  },
  {
    version: 4,
    name: "per-agent run-time settings (experience library switch)",
    sql: `
      -- NULL means "as agents.json says"; a row exists once an operator changed something.
      CREATE TABLE agent_settings (
        agent_id TEXT PRIMARY KEY,
        experience_library_enabled INTEGER CHECK (experience_library_enabled IN (0, 1)),
        updated_at INTEGER NOT NULL
      );
    `,
  },
  {
    version: 5,
    name: "chat channels: seen events, inbox, delivery outbox",
    sql: `
      -- Platform event ids already taken in (Telegram update ids, Feishu event and message ids):
      -- a re-delivery within the window is dropped, across restarts too.
      CREATE TABLE channel_seen (
        key TEXT PRIMARY KEY,
        seen_at INTEGER NOT NULL
      );
      CREATE INDEX channel_seen_by_time ON channel_seen (seen_at);

      -- Messages accepted for an answer; 'queued' ones are taken up again after a restart.
      CREATE TABLE channel_inbox (
        id INTEGER PRIMARY KEY,
        bot_key TEXT NOT NULL,
        chat_id TEXT NOT NULL,
        message TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('queued', 'answered', 'cancelled', 'failed')),
        received_at INTEGER NOT NULL,
        finished_at INTEGER
      );
      CREATE INDEX channel_inbox_by_status ON channel_inbox (bot_key, status, id);

      -- Replies are stored before they are sent; one row per part of a split reply.
      CREATE TABLE channel_outbox (
        id INTEGER PRIMARY KEY,
        bot_key TEXT NOT NULL,
        chat_id TEXT NOT NULL,
        inbox_id INTEGER REFERENCES channel_inbox (id),
        part INTEGER NOT NULL,
        parts INTEGER NOT NULL,
        text TEXT NOT NULL,
        reply_to TEXT,
        thread_id TEXT,
        status TEXT NOT NULL CHECK (status IN ('pending', 'sent', 'failed')),
        attempts INTEGER NOT NULL DEFAULT 0,
        last_error TEXT,
        platform_message_id TEXT,
        created_at INTEGER NOT NULL,
        sent_at INTEGER
      );
      CREATE INDEX channel_outbox_by_status ON channel_outbox (bot_key, status, chat_id, id);
    `,
  },
  {
    version: 6,
    name: "distillation: experiences, tags, injections, distill runs, ledger, skill versions, rules",
    sql: `
      CREATE TABLE experiences (
        id INTEGER PRIMARY KEY,
        agent_id TEXT NOT NULL,
        source TEXT NOT NULL CHECK (source IN ('task_completion', 'error_correction', 'review_finding', 'manual')),
        task_trace_id TEXT,
        summary TEXT NOT NULL CHECK (length(summary) BETWEEN 20 AND 200),
        category TEXT NOT NULL CHECK (category IN ('pitfall', 'best_practice', 'pattern', 'anti_pattern')),
        confidence REAL NOT NULL CHECK (confidence BETWEEN 0 AND 1),
        status TEXT NOT NULL DEFAULT 'draft' CHECK (status IN ('draft', 'active', 'deprecated')),
        skill_name TEXT,
        usage_count INTEGER NOT NULL DEFAULT 0,
        last_used_at INTEGER,
        created_by TEXT NOT NULL,
        deprecated_reason TEXT,
        content_hash TEXT NOT NULL,
        support_count INTEGER NOT NULL DEFAULT 1,
        contradict_count INTEGER NOT NULL DEFAULT 0,
        injected_count INTEGER NOT NULL DEFAULT 0,
        pinned INTEGER NOT NULL DEFAULT 0 CHECK (pinned IN (0, 1)),
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      );
      CREATE UNIQUE INDEX experiences_by_hash ON experiences (agent_id, content_hash);
      CREATE INDEX experiences_by_status ON experiences (agent_id, status);

      CREATE TABLE experience_tags (
        experience_id INTEGER NOT NULL REFERENCES experiences (id),
        tag TEXT NOT NULL,
        PRIMARY KEY (experience_id, tag)
      );
      CREATE INDEX experience_tags_by_tag ON experience_tags (tag);

      -- One row per lesson selected for a task; holdout rows were selected but not shown.
      CREATE TABLE experience_injections (
        id INTEGER PRIMARY KEY,
        agent_id TEXT NOT NULL,
        trace_id TEXT NOT NULL,
        experience_id INTEGER NOT NULL REFERENCES experiences (id),
        rank INTEGER NOT NULL,
        arm TEXT NOT NULL CHECK (arm IN ('treatment', 'holdout')),
        cited INTEGER NOT NULL DEFAULT 0 CHECK (cited IN (0, 1)),
        outcome TEXT CHECK (outcome IN ('success', 'failure')),
        created_at INTEGER NOT NULL,
        UNIQUE (trace_id, experience_id)
      );
      CREATE INDEX injections_by_experience ON experience_injections (experience_id, created_at);

      -- One row per settled task and distiller prompt version: the idempotency key.
      CREATE TABLE distill_runs (
        id INTEGER PRIMARY KEY,
        agent_id TEXT NOT NULL,
        trace_id TEXT NOT NULL,
        prompt_version INTEGER NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('skipped', 'distilled', 'failed')),
        skip_reason TEXT,
        source TEXT,
        outcome TEXT CHECK (outcome IN ('success', 'failure')),
        tags TEXT NOT NULL DEFAULT '',
        operations INTEGER NOT NULL DEFAULT 0,
        refused INTEGER NOT NULL DEFAULT 0,
        phantom_citations INTEGER NOT NULL DEFAULT 0,
        tokens INTEGER NOT NULL DEFAULT 0,
        created_at INTEGER NOT NULL,
        UNIQUE (trace_id, prompt_version)
      );
      CREATE INDEX distill_runs_by_agent ON distill_runs (agent_id, created_at);

      -- Every change to a lesson, skill version or rule, with its state before and after.
      CREATE TABLE memory_ledger (
        id INTEGER PRIMARY KEY,
        agent_id TEXT NOT NULL,
        subject TEXT NOT NULL CHECK (subject IN ('experience', 'skill', 'rule')),
        subject_id TEXT NOT NULL,
        action TEXT NOT NULL,
        before TEXT,
        after TEXT,
        reason TEXT,
        actor TEXT NOT NULL,
        created_at INTEGER NOT NULL
      );
      CREATE INDEX memory_ledger_by_subject ON memory_ledger (subject, subject_id, id);

      CREATE TABLE skill_versions (
        id INTEGER PRIMARY KEY,
        agent_id TEXT NOT NULL,
        skill_name TEXT NOT NULL,
        tag TEXT NOT NULL,
        version INTEGER NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('candidate', 'active', 'rejected', 'rolled_back', 'retired')),
        content TEXT NOT NULL,
        bullets INTEGER NOT NULL,
        baseline_rate REAL,
        trial_uses INTEGER NOT NULL DEFAULT 0,
        trial_successes INTEGER NOT NULL DEFAULT 0,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        UNIQUE (agent_id, skill_name, version)
      );

      -- An operator's request (laoding experiences distill <tag>) for the running bot, which owns the toolhosts.
      CREATE TABLE skill_distill_requests (
        id INTEGER PRIMARY KEY,
        agent_id TEXT NOT NULL,
        tag TEXT NOT NULL,
        requested_at INTEGER NOT NULL,
        handled_at INTEGER,
        outcome TEXT
      );

      CREATE TABLE rules (
        id INTEGER PRIMARY KEY,
        agent_id TEXT NOT NULL,
        text TEXT NOT NULL CHECK (length(text) BETWEEN 1 AND 300),
        status TEXT NOT NULL CHECK (status IN ('active', 'removed')),
        source TEXT,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      );
    `,
  },
  {
    version: 7,
    name: "lessons: who approved a lesson that names a command run from the network",
    sql: `
      -- NULL until an operator approves (restores) a held lesson or writes it: the read-time
      -- gate shows a lesson naming such a command only when this is set.
      ALTER TABLE experiences ADD COLUMN approved_by TEXT;
    `,
  },
  {
    version: 8,
    name: "rows imported from another install (laoding import go), one row per source row",
    sql: `
      -- The import key names the source row (table, id and a hash of its values), so a second
      -- import of the same install adds nothing and a different install's row 7 still imports.
      CREATE TABLE imported_rows (
        agent_id TEXT NOT NULL,
        source TEXT NOT NULL,
        import_key TEXT NOT NULL,
        target_table TEXT NOT NULL,
        target_id INTEGER,
        content_sha256 TEXT NOT NULL,
        imported_at INTEGER NOT NULL,
        PRIMARY KEY (agent_id, source, import_key)
      );
    `,
  },
  {
    version: 9,
    name: "replicas on one database: leases, the replica registry, outbox claims",
    sql: `
      -- A named claim with an expiry: a chat's turns, the Telegram poller, the Feishu long
      -- connection, once-per-day jobs. Taken and renewed by one atomic upsert; a holder that
      -- dies stops renewing and another replica takes the name once it has expired.
      CREATE TABLE leases (
        name TEXT PRIMARY KEY,
        holder TEXT NOT NULL,
        expires_at INTEGER NOT NULL,
        acquired_at INTEGER NOT NULL
      );
      CREATE INDEX leases_by_holder ON leases (holder);

      -- Every replica that runs on this database, with a fingerprint of its configuration
      -- per variable (never the values), so a replica configured differently is named.
      CREATE TABLE replicas (
        name TEXT PRIMARY KEY,
        host TEXT NOT NULL,
        pid INTEGER NOT NULL,
        config_fingerprint TEXT NOT NULL,
        started_at INTEGER NOT NULL,
        seen_at INTEGER NOT NULL
      );

      -- A part being sent is claimed by one replica until the claim expires.
      ALTER TABLE channel_outbox ADD COLUMN claimed_by TEXT;
      ALTER TABLE channel_outbox ADD COLUMN claim_expires_at INTEGER;
      CREATE INDEX channel_inbox_by_chat ON channel_inbox (bot_key, chat_id, status, id);
      -- Set when a turn begins on the message: one taken up again after its replica died is finished, not dropped.
      ALTER TABLE channel_inbox ADD COLUMN started_at INTEGER;
      -- Turns begun on the message: one that keeps failing on the store is given up after a few.
      ALTER TABLE channel_inbox ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;
    `,
  },
  {
    version: 10,
    name: "learning from outcomes: how each task ended, distilled skills' uses",
    sql: `
      -- How a settled task ended, in words the system observed (success, corrected,
      -- negative_feedback, failed_tool, step_budget, abandoned, environment). outcome stays
      -- success/failure, and is NULL for an environment failure: a model outage is no
      -- evidence about a lesson.
      ALTER TABLE experience_injections ADD COLUMN outcome_kind TEXT;
      ALTER TABLE distill_runs ADD COLUMN outcome_kind TEXT;
      -- A distilled skill's uses by settled outcome, over its life (the trial counts reset per version).
      ALTER TABLE skill_versions ADD COLUMN uses INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE skill_versions ADD COLUMN successes INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE skill_versions ADD COLUMN last_used_at INTEGER;
    `,
  },
  {
    version: 11,
    name: "a chat's sessions found by the chat (the holdout's task number counts a chat's messages)",
    sql: `
      CREATE INDEX sessions_by_chat ON sessions (agent_id, channel, chat_id);
    `,
  },
  {
    version: 12,
    name: "streamed replies: the live preview of a turn, the preview a reply's first part replaces",
    sql: `
      -- The live preview of a turn being answered (a Telegram message edited in place, a
      -- Feishu card), stored the moment it appears: a run stopped mid-stream leaves it here,
      -- and the run that takes the message up again marks it interrupted. Storing the reply
      -- moves it to channel_outbox.edit_ref, in the same transaction. The key is the inbox
      -- row's id (a table constraint, so PostgreSQL keeps it a plain column, not an identity).
      CREATE TABLE channel_streams (
        inbox_id INTEGER NOT NULL REFERENCES channel_inbox (id),
        bot_key TEXT NOT NULL,
        chat_id TEXT NOT NULL,
        ref TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (inbox_id)
      );
      -- The preview a reply's first part replaces (edits, or closes) instead of sending a new message.
      ALTER TABLE channel_outbox ADD COLUMN edit_ref TEXT;
    `,
  },
  {
    version: 13,
    name: "write-ahead tool-call audit: intent rows before the call, outcomes later (issue 29)",
    sql: `
      -- A tool call's row is now written before the call can have an effect (its intent:
      -- the arguments, redacted and shortened, and the host:pid of the process that sends
      -- it) and its outcome later, so the outcome columns are empty until then. A row left
      -- without an outcome by a process that stopped is marked error_code OUTCOME_UNKNOWN
      -- at the next start-up; tool_calls_open finds the rows still waiting. created_at is
      -- when the intent was recorded (the call's start; before this version, its end).
      -- SQLite cannot drop NOT NULL in place: the table is rebuilt, ids kept.
      CREATE TABLE tool_calls_v13 (
        id INTEGER PRIMARY KEY,
        trace_id TEXT,
        agent_id TEXT NOT NULL,
        session_id INTEGER,
        tool TEXT NOT NULL,
        args_digest TEXT NOT NULL,
        args TEXT,
        writer TEXT,
        ok INTEGER,
        error_code TEXT,
        duration_ms INTEGER,
        bytes INTEGER,
        created_at INTEGER NOT NULL
      );
      INSERT INTO tool_calls_v13 (id, trace_id, agent_id, session_id, tool, args_digest, ok, error_code, duration_ms, created_at)
        SELECT id, trace_id, agent_id, session_id, tool, args_digest, ok, error_code, duration_ms, created_at FROM tool_calls;
      DROP TABLE tool_calls;
      ALTER TABLE tool_calls_v13 RENAME TO tool_calls;
      CREATE INDEX tool_calls_by_trace ON tool_calls (trace_id);
      CREATE INDEX tool_calls_open ON tool_calls (writer) WHERE ok IS NULL AND error_code IS NULL;
    `,
    postgres: `
      ALTER TABLE tool_calls ALTER COLUMN ok DROP NOT NULL;
      ALTER TABLE tool_calls ALTER COLUMN duration_ms DROP NOT NULL;
      ALTER TABLE tool_calls ADD COLUMN args TEXT;
      ALTER TABLE tool_calls ADD COLUMN writer TEXT;
      ALTER TABLE tool_calls ADD COLUMN bytes INTEGER;
      CREATE INDEX tool_calls_open ON tool_calls (writer) WHERE ok IS NULL AND error_code IS NULL;
    `,
  },
];
