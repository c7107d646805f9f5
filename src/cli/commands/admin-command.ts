import { launchAdmin, type LaunchedAdmin } from "../../admin/launch-admin.js";
import type { Boot } from "../bootstrap.js";
import { bootstrap } from "../bootstrap.js";
import { CLI_ENTRY, packageVersion, UsageError, writeLine, type CliContext, type Command } from "../cli-context.js";
import { selectChannels } from "../../runtime/chat-bots.js";
import { parseFlags, WORKSPACE_FLAG } from "../parse-flags.js";

const usage = `Usage: laoding admin [--port N] [--workspace DIR]

Serves only the admin HTTP API (docs/admin-api.md) on ADMIN_HOST:ADMIN_PORT until
SIGINT or SIGTERM. \`laoding start\` serves it beside the bot when ADMIN_PORT is set.
ADMIN_TOKEN is required.

Options:
  --port N          port to listen on (overrides ADMIN_PORT; 0 picks a free port)
${WORKSPACE_FLAG.help()}
  -h, --help        show this help`;

export const adminCommand: Command = {
  name: "admin",
  summary: "serve the admin HTTP API (agents, experience libraries, gaps, drafts)",
  usage,
  async run(context) {
    const { values } = parseFlags(context.args, { port: { type: "string" }, ...WORKSPACE_FLAG.option }, usage);
    if (values.help) return (writeLine(context.stdout, usage), 0);
    const port = values.port === undefined ? undefined : Number(values.port);
    if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65_535))
      throw new UsageError(`--port must be a port from 0 to 65535, not "${values.port}"`, usage);
    const boot = bootstrap(context, { seed: false, workspaceDir: values.workspace });
    const chosen = port ?? boot.loaded.config.ADMIN_PORT;
    if (port === undefined && chosen === 0)
      throw new UsageError("ADMIN_PORT is 0 (off): set ADMIN_PORT in configs/env or pass --port", usage);
    const admin = await startAdminFor(context, boot, chosen);
    writeLine(context.stderr, `admin API listening on ${admin.url} (Ctrl-C to stop)`);
    await new Promise<void>((resolve) => {
      process.once("SIGINT", () => resolve());
      process.once("SIGTERM", () => resolve());
    });
    await admin.close();
    return 0;
  },
};

/** Starts the admin API for a booted workspace (`laoding admin`, and `laoding start` when ADMIN_PORT is set). */
export function startAdminFor(context: CliContext, boot: Boot, port: number): Promise<LaunchedAdmin> {
  return launchAdmin({
    config: boot.loaded.config,
    layout: boot.layout,
    agents: boot.agents,
    channels: selectChannels(boot.loaded, boot.agents),
    logger: boot.logger,
    cliEntry: CLI_ENTRY,
    version: packageVersion(),
    port,
    onWarning: (warning) => writeLine(context.stderr, `warning: ${warning}`),
  });
}
