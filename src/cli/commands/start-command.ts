import { systemClock } from "../../store/clock.js";
import { openStore } from "../../store/store.js";
import { formatSeedReport } from "../../workspace/seed-workspace.js";
import { bootstrap } from "../bootstrap.js";
import { createToolhostPool } from "../../runtime/toolhost-pool-factory.js";
import { CLI_ENTRY, writeLine, type Command } from "../cli-context.js";
import { parseFlags } from "../parse-flags.js";
import { waitForShutdownSignal } from "../shutdown.js";

const usage = `Usage: laoding start [--workspace DIR]

Seeds the workspace (only what is missing), validates the configuration, opens and
migrates the database, and runs the bot on MESSAGE_CHANNEL until SIGINT or SIGTERM.

Options:
  --workspace DIR   workspace folder (overrides AGENT_WORKSPACE_DIR)
  -h, --help        show this help`;

export const startCommand: Command = {
  name: "start",
  summary: "run the bot",
  usage,
  async run(context) {
    const { values } = parseFlags(context.args, { workspace: { type: "string" } }, usage);
    if (values.help) return writeLine(context.stdout, usage), 0;
    const boot = bootstrap(context, { seed: true, ...(values.workspace ? { workspaceDir: values.workspace } : {}) });
    const { logger, layout, loaded } = boot;
    const copied = boot.seedReport ? formatSeedReport(boot.seedReport, layout.workspaceDir).filter((line) => !line.startsWith("kept")) : [];
    if (copied.length > 0) logger.info({ workspace: layout.workspaceDir, seeded: copied }, "workspace seeded");
    const store = openStore(layout.databaseFile, systemClock);
    const toolhosts = createToolhostPool({ config: loaded.config, workspaceDir: layout.workspaceDir, cliEntry: CLI_ENTRY, env: context.env, store, logger });
    try {
      logger.info(
        { workspace: layout.workspaceDir, channel: loaded.config.MESSAGE_CHANNEL, agents: boot.agents.map((agent) => agent.id), database: layout.databaseFile },
        "LaodingBot ready; press Ctrl-C to stop",
      );
      const signal = await waitForShutdownSignal();
      logger.info({ signal }, "shutting down");
    } finally {
      // Children first: their last tool calls are still recorded in the store.
      await toolhosts.stopAll();
      store.close();
    }
    logger.info("stopped");
    return 0;
  },
};
