/**
 * Dispatches `laoding <command>`. Exit codes: 0 success, 1 an operational failure
 * (one clear line; the stack only with LOG_LEVEL=debug), 2 a wrong command line.
 */
import { environmentSecrets } from "../log/configured-secrets.js";
import { createRedactor } from "../log/redact.js";
import { writeLine, UsageError, type CliContext, type Command } from "./cli-context.js";
import { adminCommand } from "./commands/admin-command.js";
import { channelsCommand } from "./commands/channels-command.js";
import { chatCommand } from "./commands/chat-command.js";
import { configCommand } from "./commands/config-command.js";
import { dbCommand } from "./commands/db-command.js";
import { doctorCommand } from "./commands/doctor-command.js";
import { experiencesCommand } from "./commands/experiences-command.js";
import { gapsCommand } from "./commands/gaps-command.js";
import { importCommand } from "./commands/import-command.js";
import { initCommand } from "./commands/init-command.js";
import { logsCommand } from "./commands/logs-command.js";
import { mcpCommand } from "./commands/mcp-command.js";
import { operatorsCommand } from "./commands/operators-command.js";
import { rulesCommand } from "./commands/rules-command.js";
import { libraryCommand } from "./commands/library-command.js";
import { shareCommand } from "./commands/share-command.js";
import { skillsCommand } from "./commands/skills-command.js";
import { startCommand } from "./commands/start-command.js";
import { toolhostCommand } from "./commands/toolhost-command.js";

export const COMMANDS: Command[] = [
  initCommand,
  startCommand,
  chatCommand,
  configCommand,
  skillsCommand,
  gapsCommand,
  experiencesCommand,
  rulesCommand,
  libraryCommand,
  mcpCommand,
  shareCommand,
  importCommand,
  adminCommand,
  logsCommand,
  operatorsCommand,
  channelsCommand,
  doctorCommand,
  dbCommand,
  toolhostCommand,
];

export function mainUsage(commands: Command[]): string {
  const width = Math.max(...commands.map((command) => command.name.length));
  return [
    "Usage: laoding <command> [options]",
    "",
    "Commands:",
    ...commands.map((command) => `  ${command.name.padEnd(width)}  ${command.summary}`),
    "",
    "Run `laoding <command> --help` for a command's options.",
  ].join("\n");
}

export async function runCli(context: CliContext, commands: Command[] = COMMANDS): Promise<number> {
  const [name, ...rest] = context.args;
  const usage = mainUsage(commands);
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    writeLine(name === undefined ? context.stderr : context.stdout, usage);
    return name === undefined ? 2 : 0;
  }
  const command = commands.find((candidate) => candidate.name === name);
  if (!command) {
    writeLine(context.stderr, `laoding: unknown command "${name}"\n\n${usage}`);
    return 2;
  }
  const secrets = context.secrets ?? new Set(environmentSecrets(context.env));
  try {
    return await command.run({ ...context, args: rest, secrets });
  } catch (error) {
    // Whatever failed, an SDK may have put a URL with a token or an echoed key in its words.
    const { redact } = createRedactor([...secrets]);
    if (error instanceof UsageError) {
      writeLine(context.stderr, redact(`laoding ${name}: ${error.message}\n\n${error.usage}`));
      return 2;
    }
    const debug = context.env.LOG_LEVEL === "debug" || context.env.LOG_LEVEL === "trace";
    const message = error instanceof Error ? error.message : String(error);
    writeLine(context.stderr, redact(`laoding ${name}: ${debug && error instanceof Error ? error.stack : message}`));
    return 1;
  }
}
