import { resolve } from "node:path";
import { locateGoInstall } from "../../migrate/go/go-install.js";
import { applyGoImport } from "../../migrate/go/import-apply.js";
import { postgresBackupAdvice } from "../../migrate/go/import-backup.js";
import { formatPlan, planGoImport } from "../../migrate/go/import-plan.js";
import { openMaintenancePool } from "../../runtime/library-maintenance.js";
import { copyMaxBytes } from "../../share/share-plan.js";
import { systemClock } from "../../store/clock.js";
import { openStore } from "../../store/store.js";
import { bootstrap } from "../bootstrap.js";
import { CLI_ENTRY, UsageError, writeLine, type Command } from "../cli-context.js";
import { parseFlags, WORKSPACE_FLAG } from "../parse-flags.js";

const usage = `Usage: laoding import go --from DIR [--apply] [--agent ID] [--channel NAME] [--database FILE] [--skip-table NAME] [--workspace DIR]

Imports a Go LaodingBot install as it is (docs/migrate-go.md): its env file, its skills
(with or without frontmatter), its auto_* gap drafts, its database's messages and
capability gaps (chats and gap clusters continue where the Go bot stopped) and the files
of its working folder (workspace/workspace). Without --apply it prints the plan, section
by section, and writes nothing.

  --from DIR         the Go bot's folder (holding configs/env and workspace/), or its workspace
  --apply            back up (data/import-backups/), import, verify, and write the report
                     to data/go-import-<time>.json; a second --apply imports nothing new
  --agent ID         the agent that gets the drafts, chats, gaps and files (default: the first)
  --channel NAME     the channel the Go chats continue on (console, telegram, feishu;
                     default: the Go env's MESSAGE_CHANNEL, else telegram)
  --database FILE    the Go database (default: the one SQLite file in its data/)
  --skip-table NAME  leave a Go table out (repeatable)
${WORKSPACE_FLAG.help(19)}
  -h, --help         show this help`;

export const importCommand: Command = {
  name: "import",
  summary: "import a Go LaodingBot install (env, skills, drafts, chats, gaps, files): plan, then --apply",
  usage,
  async run(context) {
    const { values, positionals } = parseFlags(
      context.args,
      {
        from: { type: "string" },
        apply: { type: "boolean" },
        agent: { type: "string" },
        channel: { type: "string" },
        database: { type: "string" },
        "skip-table": { type: "string", multiple: true },
        ...WORKSPACE_FLAG.option,
      },
      usage,
      true,
    );
    if (values.help) return (writeLine(context.stdout, usage), 0);
    const [kind, ...extra] = positionals;
    if (kind !== "go")
      throw new UsageError(
        kind ? `unknown source "${kind}" (only go)` : "what to import is required: laoding import go --from DIR",
        usage,
      );
    if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}"`, usage);
    if (!values.from) throw new UsageError("--from DIR is required", usage);
    const install = locateGoInstall(
      resolve(context.cwd, values.from),
      values.database === undefined ? undefined : resolve(context.cwd, values.database),
    );
    const boot = bootstrap(context, {
      seed: values.apply === true,
      workspaceDir: values.workspace,
      logRouting: { interactive: () => false },
    });
    const agentId = values.agent ?? (boot.agents[0]?.id as string);
    if (!boot.agents.some((agent) => agent.id === agentId))
      throw new UsageError(`no agent "${agentId}" in ${boot.layout.agentsFile}`, usage);
    const out = (line: string) => writeLine(context.stdout, line);
    const store = await openStore(boot.layout.databaseTarget, systemClock);
    const maintenance = openMaintenancePool({
      config: boot.loaded.config,
      layout: boot.layout,
      agents: boot.agents,
      store,
      logger: boot.logger,
      cliEntry: CLI_ENTRY,
      onWarning: (warning) => writeLine(context.stderr, `warning: ${warning}`),
    });
    try {
      const maxCopyBytes = copyMaxBytes(boot.loaded.config.TOOLHOST_MAX_FRAME_BYTES);
      const plan = await planGoImport(install, {
        layout: boot.layout,
        repoRoot: context.repoRoot,
        maintenance,
        store,
        agentId,
        ...(values.channel ? { channel: values.channel } : {}),
        maxCopyBytes,
        skipTables: values["skip-table"] ?? [],
      });
      for (const line of formatPlan(plan)) out(line);
      for (const skill of plan.skills.filter((candidate) => candidate.derivedFrom))
        writeLine(
          context.stderr,
          `warning: ${skill.source} has no frontmatter: imported as ${skill.becomes}, its description taken from its ${skill.derivedFrom}`,
        );
      if (!values.apply) {
        if (store.engine !== "sqlite") out(`note: ${postgresBackupAdvice(store.sql.label)}`);
        out(`plan only: nothing was written. Next: laoding import go --from ${values.from} --apply`);
        return 0;
      }
      const report = await applyGoImport(plan, {
        layout: boot.layout,
        store,
        maintenance,
        now: new Date(systemClock.now()),
        lookbackHours: boot.loaded.config.GAP_CLUSTER_LOOKBACK_HOURS,
        maxCopyBytes,
        report: out,
      });
      for (const problem of report.problems) out(`  - ${problem}`);
      out(
        report.verified
          ? `import verified; report: ${report.reportFile}`
          : `import verify FAILED: ${report.problems.length} problem(s); report: ${report.reportFile}; backup: ${report.backup}`,
      );
      return report.verified ? 0 : 1;
    } finally {
      await maintenance.close();
      await store.close();
    }
  },
};
