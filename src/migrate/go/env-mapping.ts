/**
 * The Go bot's env file, variable by variable: kept (same name, valid here), renamed (a
 * Go-only name for one of ours), mapped (its meaning moves: ALLOWED_DIRS loses the Go
 * bot's own folders, which it added by itself; AUTO_SKILL_DIR=skills becomes the per-agent
 * drafts folder), explained (kept, with what changed: curl or go on ALLOWED_COMMANDS
 * against the agents' `network` setting) or dropped (with the reason). Writing merges
 * into the workspace's configs/env: a value the operator set is never replaced (only the
 * seeded default is), and the plan says which.
 */
import { isAbsolute, normalize, relative, resolve } from "node:path";
import type { EnvEntries } from "../../config/env-file.js";
import {
  SECRET_VARIABLES,
  VARIABLES,
  VARIABLE_NAMES,
  type VariableName,
  type VariableSpec,
} from "../../config/variables.js";

export type EnvAction = "kept" | "renamed" | "mapped" | "explained" | "dropped";
/** set: written; same: already so; replace-seeded: the seeded default replaced; kept-yours: the operator's value stays. */
export type EnvWrite = "set" | "same" | "replace-seeded" | "kept-yours" | "none";

export type EnvDecision = {
  goName: string;
  goValue: string;
  action: EnvAction;
  /** Our variable and the value to write (absent for a dropped variable). */
  name?: VariableName;
  value?: string;
  reason: string;
  write: EnvWrite;
  existing?: string;
  secret: boolean;
};

const RENAMES: Record<string, VariableName> = {
  OPENAI_API_KEY: "LLM_API_KEY",
  OPENAI_BASE_URL: "LLM_BASE_URL",
  OPENAI_API_BASE: "LLM_BASE_URL",
  OPENAI_MODEL: "LLM_MODEL",
  MODEL_NAME: "LLM_MODEL",
  TG_BOT_TOKEN: "TELEGRAM_BOT_TOKEN",
  TELEGRAM_TOKEN: "TELEGRAM_BOT_TOKEN",
};

const DROPPED: Record<string, string> = {
  AGENT_WORKSPACE_DIR: "the workspace is the one you import into; the Go bot's folders are copied into it",
  CONFIG_ENV_FILE: "this file is merged into the workspace's configs/env",
  DB_PATH: "the database is data/laoding.db; the Go database's rows are imported into it",
  DATABASE_PATH: "the database is data/laoding.db; the Go database's rows are imported into it",
  SQLITE_PATH: "the database is data/laoding.db; the Go database's rows are imported into it",
  WORK_DIR:
    "each agent has its own working tree (workspace/<agent>/); the Go working folder's files are copied into it",
  SHARE_DIR: "the share is moved to per-agent folders with laoding share plan|apply (docs/isolation.md)",
};

/** Commands that reach the network: kept on the list, but they need the agent's `network` setting. */
const NETWORK_COMMANDS: Record<string, string> = {
  curl: "curl fetches over the network",
  wget: "wget fetches over the network",
  go: "go downloads modules over the network (go build/run of a module with dependencies)",
  git: "git clone/pull/push reach the network",
  pip: "pip installs from the network",
  npm: "npm installs from the network",
};

export type EnvContext = {
  /** The Go bot's workspace and repository folders: their own folders on ALLOWED_DIRS are dropped. */
  goRoot: string;
  goDir: string;
  /** The workspace's configs/env as it is now, and the seeded default it started from. */
  workspaceEnv: EnvEntries | undefined;
  seedEnv: EnvEntries | undefined;
};

export function planEnv(goEntries: EnvEntries, context: EnvContext): EnvDecision[] {
  const decisions: EnvDecision[] = [];
  for (const [goName, goValue] of goEntries) {
    const decision = decide(goName, goValue, context);
    decisions.push(withWrite(decision, context));
  }
  return decisions;
}

type Draft = Omit<EnvDecision, "write" | "existing" | "secret">;

function decide(goName: string, goValue: string, context: EnvContext): Draft {
  if (Object.hasOwn(DROPPED, goName)) return { goName, goValue, action: "dropped", reason: DROPPED[goName] as string };
  if (goName === "AUTO_SKILL_DIR") {
    return {
      goName,
      goValue,
      action: "mapped",
      reason: `gap drafts are per agent now (share/agents/<agent>/skills/, the default): the Go drafts (auto_*) are copied there; "${goValue}" is not written`,
    };
  }
  if (goName === "ALLOWED_DIRS") return mapAllowedDirs(goValue, context);
  const name = Object.hasOwn(RENAMES, goName)
    ? (RENAMES[goName] as VariableName)
    : (VARIABLE_NAMES as string[]).includes(goName)
      ? (goName as VariableName)
      : undefined;
  if (!name)
    return {
      goName,
      goValue,
      action: "dropped",
      reason: "not a variable of this bot (the Go bot's own setting); it would be ignored with a warning",
    };
  const invalid = invalidReason(name, goValue);
  if (invalid)
    return {
      goName,
      goValue,
      action: "dropped",
      reason: `${name} here expects ${(VARIABLES[name] as VariableSpec).expected}: ${invalid}`,
    };
  if (name === "ALLOWED_COMMANDS") {
    const network = goValue
      .split(",")
      .map((command) => command.trim())
      .filter((command) => Object.hasOwn(NETWORK_COMMANDS, command));
    if (network.length > 0) {
      const why = network.map((command) => NETWORK_COMMANDS[command]).join("; ");
      return {
        goName,
        goValue,
        action: "explained",
        name,
        value: goValue,
        reason: `kept exactly as written; ${why}: shell commands run with the network off unless the agent has "network": true in configs/agents.json`,
      };
    }
  }
  if (name !== goName)
    return { goName, goValue, action: "renamed", name, value: goValue, reason: `the Go name for ${name}` };
  return { goName, goValue, action: "kept", name, value: goValue, reason: "same meaning here" };
}

/** The Go bot put its own workspace, data and work folders on ALLOWED_DIRS; here they are the bot's own, and refused there. */
function mapAllowedDirs(goValue: string, context: EnvContext): Draft {
  const own = ["", "workspace", "data", "work", "skills", "configs"].flatMap((name) => [
    resolve(context.goRoot, name),
    resolve(context.goDir, name),
  ]);
  const entries = goValue
    .split(",")
    .map((entry) => entry.trim())
    .filter(Boolean);
  const isOwn = (entry: string) => {
    const absolute = isAbsolute(entry) ? normalize(entry) : resolve(context.goRoot, entry);
    return (
      own.includes(absolute) ||
      own.some((folder) => relative(folder, absolute) === "") ||
      ["workspace", "data", "work", ".", "./workspace", "./data", "./work", "workspace/workspace"].includes(
        entry.replace(/\/+$/, ""),
      )
    );
  };
  const dropped = entries.filter(isOwn);
  const kept = entries.filter((entry) => !isOwn(entry));
  const droppedText =
    dropped.length > 0
      ? `the Go bot's own folders (${dropped.join(", ")}) are left out: the agents' trees are reachable by themselves here`
      : "";
  if (kept.length === 0) return { goName: "ALLOWED_DIRS", goValue, action: "mapped", reason: droppedText || "empty" };
  // Extra folders resolve against the workspace here, as they did against the Go workspace.
  return {
    goName: "ALLOWED_DIRS",
    goValue,
    action: "mapped",
    name: "ALLOWED_DIRS",
    value: kept.join(","),
    reason: [droppedText, `kept ${kept.join(", ")} (read-only for every agent)`].filter(Boolean).join("; "),
  };
}

function invalidReason(name: VariableName, value: string): string | undefined {
  const parsed = (VARIABLES[name] as VariableSpec).schema.safeParse(value.trim());
  return parsed.success ? undefined : parsed.error.issues.map((issue) => issue.message).join("; ");
}

function withWrite(draft: Draft, context: EnvContext): EnvDecision {
  const secret =
    (SECRET_VARIABLES as string[]).includes(draft.name ?? draft.goName) || Object.hasOwn(RENAMES, draft.goName);
  if (!draft.name || draft.value === undefined) return { ...draft, write: "none", secret };
  const existing = context.workspaceEnv?.get(draft.name);
  const decision: EnvDecision = { ...draft, secret, write: "set" };
  if (existing === undefined) return decision;
  decision.existing = existing;
  if (existing === draft.value) decision.write = "same";
  else if (context.seedEnv?.get(draft.name) === existing) decision.write = "replace-seeded";
  else decision.write = "kept-yours";
  return decision;
}

/** A value as the plan and report show it: secrets masked. */
export function shownValue(value: string, secret: boolean): string {
  if (!secret) return value;
  return value.length <= 8 ? "****" : `${value.slice(0, 2)}****${value.slice(-2)}`;
}

const LINE = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=/;

/**
 * The workspace env text with the decisions to write merged in: an existing `KEY=` line
 * replaced in place (only for a seeded default), new keys appended under one comment.
 */
export function mergeEnvText(existingText: string, decisions: EnvDecision[], origin: string): string {
  const lines = existingText === "" ? [] : existingText.replace(/\n$/, "").split("\n");
  const appended: string[] = [];
  for (const decision of decisions) {
    if (decision.write !== "set" && decision.write !== "replace-seeded") continue;
    const line = `${decision.name}=${quoteEnvValue(decision.value as string)}`;
    const at = lines.findLastIndex((candidate) => LINE.exec(candidate.trim())?.[1] === decision.name);
    if (at >= 0) lines[at] = line;
    else appended.push(line);
  }
  if (appended.length > 0)
    lines.push("", `# imported from the Go LaodingBot (${origin}) by laoding import go`, ...appended);
  return `${lines.join("\n")}\n`;
}

function quoteEnvValue(value: string): string {
  return /^[^\s"'#\\]*$/.test(value) ? value : `"${value.replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`;
}
