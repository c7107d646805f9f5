import { parseIndexLines } from "../../knowledge/library/library-search.js";
import {
  openLibraryMaintenance,
  openMaintenancePool,
  type LibraryMaintenance,
  type MaintenanceOptions,
} from "../../runtime/library-maintenance.js";
import { systemClock } from "../../store/clock.js";
import { openStore, type Store } from "../../store/store.js";
import { bootstrap, type Boot } from "../bootstrap.js";
import { CLI_ENTRY, UsageError, writeLine, type CliContext, type Command } from "../cli-context.js";
import { parseFlags, WORKSPACE_FLAG } from "../parse-flags.js";

const usage = `Usage: laoding library <enable|disable|reset|list|index|rebuild> <agent> [--workspace DIR]
       laoding library list [--workspace DIR]      (every agent's library)

  enable    turn the agent's team experience library on (overrides agents.json)
  disable   turn it off: no link, no signpost, no library tools, not bound in the sandbox
  reset     drop the override: agents.json's experienceLibrary decides again
            (a running bot applies enable/disable/reset at the agent's next message)
  list      the library's documents: file, title, last verified
  index     print INDEX.md (regenerated first when it is out of date)
  rebuild   regenerate INDEX.md from the documents now

list, index and rebuild run through the agent's own toolhost, with its authority.

Options:
${WORKSPACE_FLAG.help()}
  -h, --help        show this help`;

const ACTIONS = ["enable", "disable", "reset", "list", "index", "rebuild"] as const;
type Action = (typeof ACTIONS)[number];

export const libraryCommand: Command = {
  name: "library",
  summary: "switch an agent's team experience library on or off; list, print or rebuild its index",
  usage,
  async run(context) {
    const { values, positionals } = parseFlags(context.args, { ...WORKSPACE_FLAG.option }, usage, true);
    if (values.help) return (writeLine(context.stdout, usage), 0);
    const [action, agentId, ...extra] = positionals;
    if (!ACTIONS.includes(action as Action))
      throw new UsageError(action ? `unknown action "${action}"` : "an action is required", usage);
    if ((!agentId && action !== "list") || extra.length > 0) throw new UsageError("name exactly one agent", usage);
    // stdout is the listing: logs go to the log file (bootstrap.ts).
    const boot = bootstrap(context, {
      seed: false,
      workspaceDir: values.workspace,
      logRouting: { interactive: () => false },
    });
    if (!agentId) return listEveryLibrary(context, boot);
    const agent = boot.agents.find((candidate) => candidate.id === agentId);
    if (!agent)
      throw new UsageError(
        `no agent "${agentId}"; known: ${boot.agents.map((candidate) => candidate.id).join(", ")}`,
        usage,
      );
    const store = await openStore(boot.layout.databaseTarget, systemClock);
    try {
      if (action === "enable" || action === "disable" || action === "reset") {
        await store.agentSettings.setExperienceLibrary(agent.id, action === "reset" ? undefined : action === "enable");
        const effective = (await store.agentSettings.experienceLibrary(agent.id)) ?? agent.experienceLibrary;
        writeLine(
          context.stdout,
          `agent ${agent.id}: experience library ${effective ? "enabled" : "disabled"} (${action === "reset" ? "as agents.json says" : `override; agents.json says ${agent.experienceLibrary ? "enabled" : "disabled"}`}); a running bot applies it at the agent's next message`,
        );
        return 0;
      }
      const maintenance = openLibraryMaintenance({ ...maintenanceOptions(boot, store), agent });
      try {
        if (action === "rebuild") {
          writeLine(context.stdout, await maintenance.refresh(true));
        } else if (action === "index") {
          context.stdout.write(await maintenance.readIndex());
        } else {
          await printListing(context, maintenance, "");
        }
      } finally {
        await maintenance.close();
      }
      return 0;
    } finally {
      await store.close();
    }
  },
};

/** One line per document (`file  title  (last verified)`), then the count and the folder. */
async function printListing(context: CliContext, maintenance: LibraryMaintenance, prefix: string): Promise<void> {
  const entries = parseIndexLines(await maintenance.readIndex());
  for (const entry of entries) {
    const [, title = "", , , verified = ""] = entry.line.slice(2).split(" | ");
    writeLine(context.stdout, `${prefix}${entry.file}  ${title}  (${verified})`);
  }
  writeLine(context.stdout, `${prefix}${entries.length} document(s) in ${maintenance.trees.experienceDir}`);
}

/**
 * The maintenance children of this command: warnings said once, and their own log lines
 * into the command's log file when it has one, so stdout and stderr carry only the result.
 */
function maintenanceOptions(boot: Boot, store: Store): Omit<MaintenanceOptions, "agents"> {
  const logFile = boot.logFile;
  return {
    config: boot.loaded.config,
    layout: boot.layout,
    store,
    logger: boot.logger,
    cliEntry: CLI_ENTRY,
    onWarning: (warning) => boot.warn(warning),
    ...(logFile ? { childStderr: () => logFile.fd() } : {}),
  };
}

/** `laoding library list` without an agent: every agent's library, each line led by the agent's id. */
async function listEveryLibrary(context: CliContext, boot: Boot): Promise<number> {
  const store = await openStore(boot.layout.databaseTarget, systemClock);
  const pool = openMaintenancePool({ ...maintenanceOptions(boot, store), agents: boot.agents });
  try {
    for (const agent of boot.agents) await printListing(context, pool.agent(agent.id), `${agent.id}  `);
    return 0;
  } finally {
    await pool.close();
    await store.close();
  }
}
