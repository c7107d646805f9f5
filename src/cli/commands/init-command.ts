import { formatSeedReport } from "../../workspace/seed-workspace.js";
import { bootstrap } from "../bootstrap.js";
import { writeLine, type Command } from "../cli-context.js";
import { parseFlags, WORKSPACE_FLAG } from "../parse-flags.js";

const usage = `Usage: laoding init [--workspace DIR]

Creates the runtime workspace (default ./workspace/agent_runtime, or AGENT_WORKSPACE_DIR)
and copies the seed files that are missing. Existing files are never overwritten.

Options:
${WORKSPACE_FLAG.help()}
  -h, --help        show this help`;

export const initCommand: Command = {
  name: "init",
  summary: "create or complete a runtime workspace from the seed",
  usage,
  async run(context) {
    const { values } = parseFlags(context.args, { ...WORKSPACE_FLAG.option }, usage);
    if (values.help) return (writeLine(context.stdout, usage), 0);
    const boot = bootstrap(context, {
      seed: true,
      workspaceDir: values.workspace,
      logRouting: { interactive: () => false },
    });
    const report = boot.seedReport;
    writeLine(context.stdout, `workspace ${boot.layout.workspaceDir}`);
    for (const line of report ? formatSeedReport(report, boot.layout.workspaceDir) : [])
      writeLine(context.stdout, `  ${line}`);
    const copiedCount = (report?.copied.length ?? 0) + (report?.createdDirs.length ?? 0);
    writeLine(
      context.stdout,
      copiedCount === 0
        ? "nothing to do: the workspace is complete"
        : `done: ${report?.copied.length ?? 0} files copied, ${report?.skipped.length ?? 0} kept, ${report?.createdDirs.length ?? 0} folders created`,
    );
    return 0;
  },
};
