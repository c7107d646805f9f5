/**
 * The steps every long-running command shares: seed the workspace, load and validate
 * the configuration and agents, and build the logger. Side effects stay here, at the edge.
 *
 * Where logs go (docs/deployment.md, "Logs"), for commands that ask (`logRouting`):
 * stdout carries only the command's result. A person chatting on the terminal: the log
 * file, and a one-line notice per warning. Under a supervisor (systemd's journal on
 * stderr) or with LOG_LEVEL set in the environment: JSON on stderr. Otherwise (a script, a
 * pipe, a one-shot command): the log file only. Commands that do not ask log to stderr
 * (the toolhost child, whose stderr the bot hands to its own log).
 */
import { fstatSync } from "node:fs";
import { join } from "node:path";
import { declaredCredentialNames, personaFile, readAgentsFile, type AgentDefinition } from "../config/agents.js";
import { describeUnknownKey, loadConfig, resolveWorkspaceDir, type LoadedConfig } from "../config/load-config.js";
import { checkWorkspaceLocation } from "../config/workspace-location.js";
import { createRuntimeLayout, type RuntimeLayout } from "../config/runtime-layout.js";
import { checkShareLayout } from "../config/share-layout-check.js";
import { configuredSecrets } from "../log/configured-secrets.js";
import { openLogFile, type LogFile } from "../log/log-file.js";
import { createLogger, type Logger, type NoticeWords } from "../log/logger.js";
import { text, type Locale } from "../locale/texts.js";
import { seedConfigFiles, seedWorkspace, type SeedReport } from "../workspace/seed-workspace.js";
import type { CliContext } from "./cli-context.js";

export type Boot = {
  loaded: LoadedConfig;
  layout: RuntimeLayout;
  agents: AgentDefinition[];
  logger: Logger;
  seedReport?: SeedReport;
  /** Set when logs go to a file. */
  logFile?: LogFile;
  /**
   * Logs a warning and makes sure a person sees it exactly once: on stderr as a plain
   * line unless the log lines themselves already reach stderr (JSON or a notice).
   */
  warn(message: string, fields?: Record<string, unknown>): void;
};

export type BootOptions = {
  /** From `--workspace`; undefined means AGENT_WORKSPACE_DIR or its default. */
  workspaceDir?: string | undefined;
  /** Seed missing workspace files first (init, start, chat); the toolhost child never seeds. */
  seed: boolean;
  logBase?: Record<string, unknown>;
  /**
   * The command's stdout is its result (chat, start, library, operators...): logs leave
   * stderr too unless wanted there (see the header). `interactive`: a person is chatting
   * on this terminal. Absent: logs go to stderr.
   */
  logRouting?: { interactive: (loaded: LoadedConfig, agents: AgentDefinition[]) => boolean };
};

export type LogRoute = "terminal" | "file" | "stderr";

const LOG_FILE_MAX_BYTES = 10 * 1024 * 1024;
const LOG_FILES_KEPT = 3;

export function bootstrap(context: CliContext, options: BootOptions): Boot {
  const configOptions = {
    env: context.env,
    repoRoot: context.repoRoot,
    cwd: context.cwd,
    ...(options.workspaceDir ? { workspaceDir: options.workspaceDir } : {}),
  };
  const sources = {
    repoConfigsDir: join(context.repoRoot, "configs"),
    seedDir: join(context.repoRoot, "workspace", "seed"),
  };
  const workspaceDir = resolveWorkspaceDir(configOptions);
  checkWorkspaceLocation(workspaceDir);
  const seedReport = options.seed ? seedConfigFiles(workspaceDir, sources) : undefined;
  const loaded = loadConfig(configOptions);
  const layout = createRuntimeLayout(loaded.workspaceDir, loaded.config);
  const agents = readAgentsFile(layout.agentsFile);
  checkShareLayout(layout, agents);
  if (seedReport) {
    seedWorkspace(layout, agents, sources, seedReport);
    // A persona that leads out of bot_context/ stops start-up, naming the agent.
    for (const agent of agents) personaFile(layout.botContextDir, agent);
  }
  // Bot credentials that agents.json names are ours too: not typos, and secrets.
  const declared = new Set(declaredCredentialNames(agents));
  // Every secret the configuration holds: the logger redacts them, and so does the CLI's
  // last error printer (a secret only in configs/env is unknown to it until now).
  const secrets = configuredSecrets(loaded, agents);
  for (const value of secrets) context.secrets?.add(value);
  const route: LogRoute = options.logRouting
    ? chooseLogRoute(context, options.logRouting.interactive(loaded, agents))
    : "stderr";
  const logFile =
    route === "stderr"
      ? undefined
      : openLogFile({ dir: layout.logDir, maxBytes: LOG_FILE_MAX_BYTES, keep: LOG_FILES_KEPT });
  const logger = createLogger({
    level: loaded.config.LOG_LEVEL,
    secrets,
    ...(options.logBase ? { base: options.logBase } : {}),
    // A file without notices is a file: a sink that never shows a warning on stderr.
    ...(logFile
      ? {
          file: {
            sink: logFile,
            notices: route === "terminal" ? context.stderr : discard,
            noticeWords: noticeWords(loaded.config.BOT_LOCALE),
          },
        }
      : {}),
  });
  // Said on the console whatever the log level, once: a typo silently ignored costs hours.
  const warningsReachStderr = route === "terminal" || (route === "stderr" && logger.isLevelEnabled("warn"));
  const warn = (message: string, fields: Record<string, unknown> = {}) => {
    logger.warn(fields, message);
    if (!warningsReachStderr) context.stderr.write(`warning: ${message}\n`);
  };
  for (const { key, path } of loaded.unknownKeys.filter(({ key }) => !declared.has(key)))
    warn(describeUnknownKey(key, path), { key, path });
  return {
    loaded,
    layout,
    agents,
    logger,
    warn,
    ...(seedReport ? { seedReport } : {}),
    ...(logFile ? { logFile } : {}),
  };
}

/**
 * Logs on stderr only when someone asked for them there: LOG_LEVEL in the process
 * environment (`LOG_LEVEL=debug laoding chat`; the one in configs/env only sets the
 * level), or systemd's journal as stderr (JOURNAL_STREAM names stderr's device:inode).
 */
export function chooseLogRoute(context: CliContext, interactive: boolean): LogRoute {
  if (interactive) return "terminal";
  if (context.env.LOG_LEVEL !== undefined) return "stderr";
  return stderrIsJournal(context) ? "stderr" : "file";
}

function stderrIsJournal(context: CliContext): boolean {
  const journal = context.env.JOURNAL_STREAM;
  const fd = (context.stderr as Partial<{ fd: number }>).fd;
  if (!journal || typeof fd !== "number") return false;
  try {
    const stat = fstatSync(fd);
    return journal === `${stat.dev}:${stat.ino}`;
  } catch {
    return false;
  }
}

const discard = { write: () => true } as unknown as NodeJS.WritableStream;

/** A terminal notice in the bot's language: its label and frame from the locale tables. */
function noticeWords(locale: Locale): NoticeWords {
  return {
    warning: text(locale, "logNoticeWarning"),
    error: text(locale, "logNoticeError"),
    line: (level, message, where) => text(locale, "logNotice", { level, message, where }),
  };
}
