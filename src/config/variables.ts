/**
 * The single table of configuration variables. The zod schema, `laoding config`,
 * log redaction and the `configs/env.example` check are all derived from it, so a
 * variable is declared exactly once.
 */
import { z } from "zod";
import { DEFAULT_MAX_FRAME_BYTES } from "../toolhost/protocol.js";
import { parseStreamReplies, STREAM_REPLIES_FORMS } from "./stream-replies.js";

export type VariableSpec = {
  /** zod schema for the raw string value (after trimming); converts to the runtime type. */
  schema: z.ZodType;
  /** Shown in errors as what is expected. */
  expected: string;
  /** Default as a raw string; undefined means optional without default (or required). */
  defaultValue?: string;
  required?: boolean;
  secret?: boolean;
  group: string;
  doc: string;
};

const integer = (min: number, max: number) =>
  z
    .string()
    .regex(/^-?\d+$/, { message: "not a whole number" })
    .transform(Number)
    .pipe(
      z
        .number()
        .int()
        .min(min, { message: `below the minimum ${min}` })
        .max(max, { message: `above the maximum ${max}` }),
    );

/**
 * A bounded whole number and its `expected` text, both from the same bounds, so a bound
 * changes in one place: bounded("milliseconds", 1_000, 600_000) expects "milliseconds
 * from 1000 to 600000". `note` follows the range as written (" (0: never)").
 */
const bounded = (unit: string, min: number, max: number, note = "") => ({
  schema: integer(min, max),
  expected: `${unit} from ${min} to ${max}${note}`,
});

const text = () => z.string();
const optionalText = () => z.string().min(1);
const list = () =>
  z.string().transform((value) =>
    value
      .split(",")
      .map((item) => item.trim())
      .filter((item) => item.length > 0),
  );
const httpUrl = () =>
  z.string().refine((value) => /^https?:\/\/[^\s]+$/.test(value), { message: "not an http(s) URL" });
const postgresUrl = () =>
  z.string().refine((value) => /^postgres(ql)?:\/\/[^\s]+$/i.test(value), { message: "not a postgres:// URL" });
const oneOf = <const T extends readonly [string, ...string[]]>(values: T) =>
  z.enum(values, { message: `not one of ${values.join(" | ")}` });

export const VARIABLES = {
  // Workspace and paths
  AGENT_WORKSPACE_DIR: {
    schema: text(),
    expected: "a folder path (relative paths resolve against the repository root)",
    defaultValue: "./workspace/agent_runtime",
    group: "Workspace",
    doc: "Runtime workspace: configs, skills, data, share and per-chat working folders live here.",
  },
  CONFIG_ENV_FILE: {
    schema: optionalText(),
    expected: "a path to an env file",
    group: "Workspace",
    doc: "Extra env file that overrides the workspace and repo env files (process env still wins).",
  },
  WORK_DIR: {
    schema: text(),
    expected: "a folder path (relative to the workspace)",
    defaultValue: "workspace",
    group: "Workspace",
    doc: "Root of the per-agent, per-chat working folders (tool cwd): <WORK_DIR>/<agent>/<chat>.",
  },
  SHARE_DIR: {
    schema: text(),
    expected: "a folder path (relative to the workspace)",
    defaultValue: "share",
    group: "Workspace",
    doc: "Shared area: agent-experience/<agent>/ libraries and agents/<agent>/ private folders.",
  },
  LIBRARY_LINK_NAME: {
    schema: z
      .string()
      .min(1)
      .max(255)
      .refine((value) => value !== "." && value !== ".." && !/[/\\\s\p{Cc}]/u.test(value), {
        message: "must be one folder name: no / or \\, spaces or control characters, not . or ..",
      }),
    expected: "a single file name (no / or \\, no spaces)",
    defaultValue: "团队经验",
    group: "Workspace",
    doc: "Name of the link in every session working folder that points to the agent's experience library.",
  },
  AUTO_SKILL_DIR: {
    schema: optionalText(),
    expected: "a folder path (relative to the workspace)",
    group: "Workspace",
    doc: "Where an agent's own skills (gap drafts, distilled drafts) go. Default: share/agents/<agent>/skills. {agent} is replaced by the agent id; without it the id is appended as a subfolder.",
  },
  ALLOWED_DIRS: {
    schema: list(),
    expected: "a comma-separated list of folder paths",
    defaultValue: "",
    group: "Tools",
    doc: "Extra folders every agent may read (read-only for all agents; a folder one agent may write is its `writableDirs` in agents.json).",
  },
  EGRESS_HOSTS: {
    schema: optionalText(),
    expected: "a path to a hosts-format file (relative to the workspace)",
    group: "Tools",
    doc: "Names the egress proxy resolves from this file instead of DNS (`<address> <name> [<name>...]` per line, # comments). A name mapped here is trusted to its address, even a loopback or private one, so this is how an agent's allow list reaches an internal host of a split-horizon network, and how tests name loopback servers (docs/network.md).",
  },
  MCP_MAX_TOOLS_PER_AGENT: {
    ...bounded("a number of tools", 0, 500),
    defaultValue: "40",
    group: "Tools",
    doc: "Most MCP server tools offered to the model in one request (built-in tools are not counted): those the routed skills name in `allowed-tools` first, then the rest in server order.",
  },
  MCP_START_TIMEOUT_MS: {
    ...bounded("milliseconds", 1_000, 600_000),
    defaultValue: "30000",
    group: "Tools",
    doc: "How long an MCP server may take from its start to its tools list; one that takes longer is stopped and started again on a later use, after a back-off (1 s, doubling up to 60 s).",
  },
  ALLOWED_COMMANDS: {
    schema: list(),
    expected: "a comma-separated list of command names",
    defaultValue:
      "ls,cat,head,tail,wc,grep,find,echo,pwd,date,sort,uniq,cut,tr,sed,awk,mkdir,touch,cp,mv,rm,python3,git",
    group: "Tools",
    doc: "Commands shell.exec may run, exactly this list (nothing is added); every simple command of a pipeline or list is checked, see docs/command-allowlist.md. An interpreter here (python3, node, ...) can run any program the OS sandbox allows.",
  },

  // Agent loop
  REACT_MAX_STEPS: {
    ...bounded("a whole number", 1, 100),
    required: true,
    group: "Agent",
    doc: "Maximum ReAct steps (model calls) per turn. No code default: the seeded env file sets it.",
  },
  TURN_TIMEOUT_MS: {
    ...bounded("milliseconds", 1_000, 3_600_000),
    defaultValue: "180000",
    group: "Agent",
    doc: "Overall deadline of one turn (routing, every model call and tool call); past it the turn is cancelled and the user told.",
  },
  CONTEXT_CHAR_BUDGET: {
    ...bounded("a whole number", 1_000, 1_000_000),
    defaultValue: "12000",
    group: "Agent",
    doc: "Characters of recent conversation the model sees; older messages are folded into a rolling summary.",
  },
  GAP_DRAFT_TRIGGER_COUNT: {
    ...bounded("a whole number", 1, 1000),
    defaultValue: "3",
    group: "Agent",
    doc: "Capability gaps in one cluster (from at least two sessions) that make the bot draft a skill.",
  },
  GAP_CLUSTER_LOOKBACK_HOURS: {
    ...bounded("a whole number of hours", 1, 24 * 365),
    defaultValue: "72",
    group: "Agent",
    doc: "How far back gaps count towards a cluster.",
  },
  BOT_LOCALE: {
    schema: oneOf(["zh", "en"]),
    expected: "zh or en",
    defaultValue: "zh",
    group: "Agent",
    doc: "Language of the bot's own texts (help, errors, command replies).",
  },

  // Distillation (docs/distillation.md)
  DISTILLATION_ENABLED: {
    schema: oneOf(["true", "false"]).transform((value) => value === "true"),
    expected: "true or false",
    defaultValue: "true",
    group: "Distillation",
    doc: "Learn short lessons from finished tasks, show the relevant ones to later tasks, and retire the ones that do not help.",
  },
  DISTILL_HOLDOUT_PERCENT: {
    ...bounded("a whole number", 0, 50),
    defaultValue: "10",
    group: "Distillation",
    doc: "Share of eligible tasks (by a hash of the agent, the chat and the task's number in that chat) whose chosen lessons are recorded but not shown, so the effect report is causal.",
  },
  DISTILL_HOLDOUT_SEED: {
    schema: text(),
    expected: "any text",
    defaultValue: "",
    group: "Distillation",
    doc: "Mixed into the holdout's hash: the same seed holds out the same tasks of a replayed conversation; another seed draws another holdout.",
  },
  DISTILL_SETTLE_QUIET_MS: {
    ...bounded("milliseconds", 1_000, 86_400_000),
    defaultValue: "600000",
    group: "Distillation",
    doc: "A task's outcome settles at the user's next message in that chat or after this much quiet; distillation runs then.",
  },
  DISTILL_CURATE_INTERVAL_MS: {
    ...bounded("milliseconds", 60_000, 7 * 86_400_000),
    defaultValue: "86400000",
    group: "Distillation",
    doc: "How often the lesson lifecycle (promote, deprecate) runs over every agent's lessons; it also runs after each settled task.",
  },

  // Model
  LLM_BASE_URL: {
    schema: httpUrl(),
    expected: "an http(s) URL such as https://api.openai.com/v1",
    group: "Model",
    doc: "OpenAI-compatible endpoint (OpenAI, DeepSeek, DashScope compatible mode, Ollama, vLLM).",
  },
  LLM_API_KEY: {
    schema: optionalText(),
    expected: "an API key",
    secret: true,
    group: "Model",
    doc: "API key for LLM_BASE_URL (any non-empty value for servers that need none).",
  },
  LLM_MODEL: {
    schema: optionalText(),
    expected: "a model name",
    group: "Model",
    doc: "Model name. Without LLM_BASE_URL and LLM_MODEL the bot starts and answers with how to configure one.",
  },
  LLM_TIMEOUT_MS: {
    ...bounded("milliseconds", 1_000, 600_000),
    defaultValue: "20000",
    group: "Model",
    doc: "Timeout of one model request attempt. With LLM_MAX_RETRIES, a dead model is reported in well under a minute; raise it for slow reasoning models.",
  },
  LLM_MAX_RETRIES: {
    ...bounded("a whole number", 0, 10),
    defaultValue: "1",
    group: "Model",
    doc: "Retries of a model request on rate limits, server errors, timeouts and connection failures (never on a refused key or a bad request). Each retry is shown while waiting.",
  },

  // Channels
  MESSAGE_CHANNEL: {
    schema: z
      .string()
      .transform((value) =>
        value
          .split(",")
          .map((item) => item.trim())
          .filter((item) => item.length > 0),
      )
      .pipe(
        z
          .array(z.enum(["console", "telegram", "feishu"], { message: "not one of console | telegram | feishu" }))
          .min(1, { message: "empty" }),
      ),
    expected: "a comma list of console | telegram | feishu",
    group: "Channels",
    doc: "Where the bot talks: console (the terminal), telegram, feishu, or a comma list. Unset: every chat channel that has credentials (an agent's own bot in agents.json counts), else the console.",
  },
  OPERATOR_IDS: {
    schema: list(),
    expected: "a comma list of channel:user-id, such as telegram:123456,feishu:ou_abc",
    defaultValue: "",
    group: "Channels",
    doc: "Who may run operator commands (/capability_gaps, /reload_skills) on Telegram and Feishu, as channel:user-id (Telegram numeric user ids, Feishu open_ids; an id without channel: counts on every channel). Others get a polite refusal. The console user is always an operator.",
  },
  GROUP_POLICY: {
    schema: oneOf(["mention", "all"]),
    expected: "mention | all",
    defaultValue: "mention",
    group: "Channels",
    doc: "In group chats: answer only when the bot is mentioned or replied to (mention), or every message (all). Private chats are always answered.",
  },
  MESSAGE_MAX_CHARS: {
    ...bounded("characters", 100, 1_000_000),
    defaultValue: "16000",
    group: "Channels",
    doc: "Longest inbound chat message, in characters (code points), on every channel. A longer one is not sent to the model and not stored; the user gets one reply asking to shorten or split it.",
  },
  STREAM_REPLIES: {
    schema: z.string().transform((value, context) => {
      const parsed = parseStreamReplies(value);
      if (parsed.ok) return parsed.value;
      context.addIssue({ code: "custom", message: parsed.problem });
      return z.NEVER;
    }),
    expected: STREAM_REPLIES_FORMS,
    defaultValue: "on",
    group: "Channels",
    doc: "Show an answer while it is written: on the console as it arrives (on a terminal; scripts get the whole answer), on Telegram as a draft in private chats or a message edited in place in groups, on Feishu as a streaming card. Only the answer's text streams (never tool calls or citations); the final answer is what is stored. on or off sets every channel; console=, telegram= and feishu= after it set one (off,console=on streams only on the console).",
  },
  STREAM_EDIT_INTERVAL_MS: {
    ...bounded("milliseconds", 250, 60_000),
    defaultValue: "1000",
    group: "Channels",
    doc: "Least time between two updates of a streamed reply (a Telegram message edited in place or draft refreshed, a Feishu card updated); an update waits for the answer to grow by 20 characters or a new line, and a platform's 429 pauses them as long as it asks.",
  },
  WEBHOOK_HOST: {
    schema: optionalText(),
    expected: "an address to listen on, such as 127.0.0.1 or 0.0.0.0",
    defaultValue: "127.0.0.1",
    group: "Channels",
    doc: "Address the Telegram and Feishu webhook servers listen on (put a TLS reverse proxy in front; 0.0.0.0 listens on every interface).",
  },
  TELEGRAM_BOT_TOKEN: {
    schema: optionalText(),
    expected: "a bot token from @BotFather",
    secret: true,
    group: "Channels",
    doc: "Telegram bot token (from @BotFather) of the first agent in agents.json; other agents name their own in agents.json.",
  },
  TELEGRAM_API_ROOT: {
    schema: httpUrl().transform((value) => value.replace(/\/+$/, "")),
    expected: "an http(s) URL without a trailing slash",
    defaultValue: "https://api.telegram.org",
    group: "Channels",
    doc: "Telegram Bot API root (a self-hosted Bot API server, or a test fake).",
  },
  TELEGRAM_ALLOWED_USERS: {
    schema: list(),
    expected: "a comma list of Telegram numeric user ids, or *",
    group: "Channels",
    doc: "Telegram users the bot answers (numeric ids; * for everyone). Unset: everyone, with a warning at start-up. Others get a polite refusal.",
  },
  TELEGRAM_WEBHOOK_URL: {
    schema: httpUrl(),
    expected: "the public https URL Telegram posts updates to",
    group: "Channels",
    doc: "Set it to receive updates by webhook instead of long polling: the bot registers this URL with Telegram and listens on WEBHOOK_HOST:TELEGRAM_WEBHOOK_PORT at the URL's path.",
  },
  TELEGRAM_WEBHOOK_SECRET: {
    schema: z
      .string()
      .regex(/^[A-Za-z0-9_-]{16,256}$/, { message: "must be 16 to 256 characters of A-Z, a-z, 0-9, _ and -" }),
    expected: "16 to 256 characters of A-Z a-z 0-9 _ -",
    secret: true,
    group: "Channels",
    doc: "Secret token Telegram sends with every webhook request (X-Telegram-Bot-Api-Secret-Token); requests without it are refused. Required with TELEGRAM_WEBHOOK_URL.",
  },
  TELEGRAM_WEBHOOK_PORT: {
    ...bounded("a TCP port", 1, 65_535),
    defaultValue: "8443",
    group: "Channels",
    doc: "Port the Telegram webhook server listens on (webhook mode only).",
  },
  FEISHU_APP_ID: {
    schema: optionalText(),
    expected: "an app id like cli_0123456789abcdef",
    group: "Channels",
    doc: "Feishu/Lark app id of the first agent in agents.json; other agents name their own in agents.json.",
  },
  FEISHU_APP_SECRET: {
    schema: optionalText(),
    expected: "the app secret",
    secret: true,
    group: "Channels",
    doc: "Feishu/Lark app secret.",
  },
  FEISHU_DOMAIN: {
    schema: httpUrl().transform((value) => value.replace(/\/+$/, "")),
    expected: "an http(s) URL",
    defaultValue: "https://open.feishu.cn",
    group: "Channels",
    doc: "Feishu open platform domain (https://open.larksuite.com for Lark, or a test fake).",
  },
  FEISHU_ALLOWED_USERS: {
    schema: list(),
    expected: "a comma list of Feishu open_ids (ou_...), or *",
    group: "Channels",
    doc: "Feishu users the bot answers (open_ids of this app; * for everyone). Unset: everyone, with a warning at start-up. Others get a polite refusal.",
  },
  FEISHU_WEBHOOK_PORT: {
    ...bounded("a TCP port", 0, 65_535, " (0: the long connection)"),
    defaultValue: "0",
    group: "Channels",
    doc: "0: receive events over the long connection (no public URL needed). A port: receive them by webhook on WEBHOOK_HOST:port at FEISHU_WEBHOOK_PATH.",
  },
  FEISHU_WEBHOOK_PATH: {
    schema: z.string().regex(/^\/[^\s?#]*$/, { message: "must start with / and hold no spaces, ? or #" }),
    expected: "a URL path such as /feishu/events",
    defaultValue: "/feishu/events",
    group: "Channels",
    doc: "Path of the Feishu event webhook (webhook mode).",
  },
  FEISHU_ENCRYPT_KEY: {
    schema: optionalText(),
    expected: "the Encrypt Key from the app's Events and Callbacks page",
    secret: true,
    group: "Channels",
    doc: "Encrypt Key of the event subscription: webhook bodies are decrypted and their x-lark-signature checked with it.",
  },
  FEISHU_VERIFICATION_TOKEN: {
    schema: optionalText(),
    expected: "the Verification Token from the app's Events and Callbacks page",
    secret: true,
    group: "Channels",
    doc: "Verification Token of the event subscription: webhook events carrying another token are refused.",
  },

  // Admin
  ADMIN_PORT: {
    ...bounded("a TCP port", 0, 65_535, " (0 = off)"),
    defaultValue: "0",
    group: "Admin",
    doc: "Port of the admin HTTP API (on ADMIN_HOST); `laoding start` serves it when set, `laoding admin` serves only it. 0 disables it in `laoding start`. See docs/admin-api.md.",
  },
  ADMIN_HOST: {
    schema: z.string().regex(/^[A-Za-z0-9.:-]+$/, { message: "not a host name or IP address" }),
    expected: "an IP address or host name to bind (default 127.0.0.1)",
    defaultValue: "127.0.0.1",
    group: "Admin",
    doc: "Address the admin API binds. Keep the loopback default and reach it through an SSH tunnel or a reverse proxy with TLS; the token is sent in clear over plain HTTP.",
  },
  ADMIN_TOKEN: {
    schema: z.string().min(16, { message: "shorter than 16 characters" }),
    expected: "a random string of at least 16 characters",
    secret: true,
    group: "Admin",
    doc: "Bearer token required by every admin endpoint (only GET /v1/health answers without it, with version only). The admin API refuses to start without it. Generate one with `openssl rand -hex 24`.",
  },
  ADMIN_BODY_MAX_BYTES: {
    ...bounded("bytes", 1_024, 64 * 1024 * 1024),
    defaultValue: String(1024 * 1024),
    group: "Admin",
    doc: "Largest request body the admin API reads (a document PUT); larger bodies are refused with 413 BODY_TOO_LARGE.",
  },
  ADMIN_DOC_MAX_BYTES: {
    ...bounded("bytes", 1_024, 64 * 1024 * 1024),
    defaultValue: String(1024 * 1024),
    group: "Admin",
    doc: "Largest agent document the admin API reads (a document GET); the size is checked before reading, and a larger file is refused with 413 DOC_TOO_LARGE.",
  },

  // Database (docs/scale-out.md)
  DATABASE_URL: {
    schema: postgresUrl(),
    expected: "a postgres:// URL such as postgres://laoding:secret@db.internal:5432/laoding?sslmode=require",
    secret: true,
    group: "Database",
    doc: "PostgreSQL for several bot replicas (docs/scale-out.md); TLS options (sslmode, sslrootcert, sslcert, sslkey) are passed through in the URL. Unset: the embedded SQLite file data/laoding.db, for one process.",
  },
  DATABASE_POOL_MAX: {
    ...bounded("a whole number", 1, 200),
    defaultValue: "10",
    group: "Database",
    doc: "Connections each replica keeps open to PostgreSQL at most (ignored on SQLite).",
  },
  REPLICA_LEASE_MS: {
    ...bounded("milliseconds", 2_000, 600_000),
    defaultValue: "30000",
    group: "Database",
    doc: "How long a replica's claim on a chat, the Telegram poller or the Feishu connection lasts without renewal: a replica that dies is replaced within this time (renewed every third of it).",
  },
  REPLICA_NAME: {
    schema: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,62}$/, {
      message: "not a name of letters, digits, '.', '_', ':' or '-' (at most 63)",
    }),
    expected: "a name of letters, digits, '.', '_', ':' or '-' (at most 63 characters)",
    group: "Database",
    doc: "This replica's name in leases, logs and /v1/health. Default: the host name and process id.",
  },

  // Logging
  LOG_LEVEL: {
    schema: oneOf(["trace", "debug", "info", "warn", "error", "fatal", "silent"]),
    expected: "trace | debug | info | warn | error | fatal | silent",
    defaultValue: "info",
    group: "Logging",
    doc: "Log level (pino JSON lines). Where they go: the log file in LOG_DIR, or stderr when LOG_LEVEL is set in the process environment or the bot runs under systemd's journal (docs/deployment.md, Logs); while chatting on a terminal only a one-line notice of each warning or error is shown (read them with `laoding logs`). debug also prints stack traces of CLI failures.",
  },
  LOG_DIR: {
    schema: text(),
    expected: "a folder path (relative to the workspace)",
    defaultValue: "data/logs",
    group: "Logging",
    doc: "Folder of the log file (relative to the workspace): laoding.log, rotated at 10 MiB, 3 old files kept.",
  },
  SHUTDOWN_GRACE_MS: {
    ...bounded("milliseconds", 0, 600_000),
    defaultValue: "10000",
    group: "Agent",
    doc: "On SIGINT/SIGTERM, how long answers in progress may finish before they are cancelled (a second signal cancels them at once).",
  },

  // ToolHost
  TOOLHOST_SANDBOX: {
    schema: oneOf(["auto", "bwrap", "none", "none-unsafe"]),
    expected: "auto | bwrap | none | none-unsafe",
    defaultValue: "auto",
    group: "ToolHost",
    doc: "OS sandbox for tools: bwrap (every command in its own sandbox), none (no sandbox per command; as root each agent's toolhost still runs in its own mount, pid and network namespaces, and start-up stops if they cannot be made), auto (bwrap where it works, else none with a warning), or none-unsafe (as root: agents kept apart by their uids only, sharing the host's /tmp, /proc and network; see docs/isolation.md). As a non-root user, none and none-unsafe are the trust mode.",
  },
  TOOLHOST_BWRAP_PATH: {
    schema: z.string().regex(/^\//, { message: "must be an absolute path" }),
    expected: "an absolute path",
    defaultValue: "/usr/bin/bwrap",
    group: "ToolHost",
    doc: "The bubblewrap program (Debian's bubblewrap package installs /usr/bin/bwrap).",
  },
  TOOLHOST_CALL_TIMEOUT_MS: {
    ...bounded("milliseconds", 100, 3_600_000),
    defaultValue: "60000",
    group: "ToolHost",
    doc: "Deadline of one tool call as seen by the parent (shell calls get their own timeout plus a margin).",
  },
  SHELL_TIMEOUT_MS: {
    ...bounded("milliseconds", 100, 3_600_000),
    defaultValue: "30000",
    group: "ToolHost",
    doc: "Default timeout of shell.exec.",
  },
  SHELL_MAX_TIMEOUT_MS: {
    ...bounded("milliseconds", 100, 3_600_000),
    defaultValue: "300000",
    group: "ToolHost",
    doc: "Upper bound for the timeout_ms a model may ask of shell.exec.",
  },
  TOOL_OUTPUT_MAX_BYTES: {
    ...bounded("bytes", 1_024, 8 * 1024 * 1024),
    defaultValue: "40000",
    group: "ToolHost",
    doc: "Largest tool output returned to the model, in bytes after JSON encoding (and within TOOLHOST_MAX_FRAME_BYTES); longer output keeps head and tail with a marker.",
  },
  TOOLHOST_HEARTBEAT_MS: {
    ...bounded("milliseconds", 50, 600_000),
    defaultValue: "5000",
    group: "ToolHost",
    doc: "Interval of heartbeat pings; a child that misses two in a row is restarted.",
  },
  TOOLHOST_IDLE_STOP_MS: {
    ...bounded("milliseconds", 0, 86_400_000, " (0: never)"),
    defaultValue: "600000",
    group: "ToolHost",
    doc: "An agent's toolhost child that has run no tool call for this long is stopped, and starts again on the next call (about a second): a bot with many agents holds memory only for the busy ones. 0 keeps every child running.",
  },
  TOOLHOST_RESTART_LIMIT: {
    ...bounded("a whole number", 1, 100),
    defaultValue: "5",
    group: "ToolHost",
    doc: "Crashes within TOOLHOST_RESTART_WINDOW_MS after which the child is left down until a later probe.",
  },
  TOOLHOST_RESTART_WINDOW_MS: {
    ...bounded("milliseconds", 1_000, 86_400_000),
    defaultValue: "180000",
    group: "ToolHost",
    doc: "Window for TOOLHOST_RESTART_LIMIT; also the cool-down before a probe start.",
  },
  TOOLHOST_CONCURRENCY: {
    ...bounded("a whole number", 1, 64),
    defaultValue: "4",
    group: "ToolHost",
    doc: "Tool calls running at once per agent child.",
  },
  TOOLHOST_QUEUE_MAX: {
    ...bounded("a whole number", 0, 10_000),
    defaultValue: "64",
    group: "ToolHost",
    doc: "Calls waiting for a slot per agent; past it a call is refused at once with TOOLHOST_UNAVAILABLE.",
  },
  TOOLHOST_MAX_FRAME_BYTES: {
    ...bounded("bytes", 64 * 1024, 256 * 1024 * 1024),
    defaultValue: String(DEFAULT_MAX_FRAME_BYTES),
    group: "ToolHost",
    doc: "Largest JSON-RPC frame either side accepts; larger, lying or malformed frames close the connection.",
  },
  TOOLHOST_UID_BASE: {
    ...bounded("a uid", 1_000, 4_000_000_000),
    defaultValue: "20000",
    group: "ToolHost",
    doc: "When the bot runs as root, each agent's toolhost and shell commands run as a dedicated uid derived from this base, and its folders are owned by that uid.",
  },
  TOOLHOST_NPROC_LIMIT: {
    ...bounded("a whole number", 8, 100_000),
    defaultValue: "256",
    group: "ToolHost",
    doc: "Maximum processes (threads included) of one agent's uid, its toolhost counted (bounds fork bombs; needs the per-agent uid, so root only).",
  },
  TOOLHOST_TMP_SIZE_MB: {
    ...bounded("megabytes", 1, 65_536),
    defaultValue: "64",
    group: "ToolHost",
    doc: "Size of the private /tmp each sandboxed shell command gets.",
  },
  TOOLHOST_MEMORY_LIMIT_MB: {
    ...bounded("megabytes", 16, 1_048_576),
    defaultValue: "1024",
    group: "ToolHost",
    doc: "Memory limit of each shell command (RLIMIT_DATA: heap and private mappings), in every sandbox mode.",
  },
  TOOLHOST_AGENT_MEMORY_MB: {
    ...bounded("megabytes", 64, 1_048_576),
    defaultValue: "2048",
    group: "ToolHost",
    doc: "Memory of one agent's toolhost and all its commands together, tmpfs pages included (a memory cgroup per agent; needs root and cgroup v2 or the v1 memory and pids controllers, else only the per-command limit holds). Its process count is bounded by TOOLHOST_NPROC_LIMIT in the same way.",
  },
} as const satisfies Record<string, VariableSpec>;

export type VariableName = keyof typeof VARIABLES;
export const VARIABLE_NAMES = Object.keys(VARIABLES) as VariableName[];
export const SECRET_VARIABLES: VariableName[] = VARIABLE_NAMES.filter(
  (name) => (VARIABLES[name] as VariableSpec).secret === true,
);
