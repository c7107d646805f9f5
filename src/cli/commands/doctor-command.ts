import { existsSync, readFileSync, statfsSync } from "node:fs";
import { join } from "node:path";
import { configuredSecrets, environmentSecrets } from "../../log/configured-secrets.js";
import { renderJson, renderText, doctorOk } from "../../doctor/doctor-report.js";
import { runDoctor, type DoctorRun } from "../../doctor/run-doctor.js";
import { createOpenAIChatModel } from "../../llm/openai-chat-model.js";
import { createLogger } from "../../log/logger.js";
import { prepareToolhostLaunches } from "../../runtime/toolhost-launch.js";
import { CLI_ENTRY, REPO_ROOT, writeLine, type CliContext, type Command } from "../cli-context.js";
import { parseFlags, WORKSPACE_FLAG } from "../parse-flags.js";

const usage = `Usage: laoding doctor [--workspace DIR] [--json]

Checks everything \`laoding start\` needs, one line each: ✓, or ✗ with what is wrong and
the exact fix. Node.js version; the workspace; the configuration and agents.json (every
finding, not only the first); the share layout; each agent's sandbox (its launch chain
probed as its uid, as start-up does); skills that fail to load; the database (PRAGMA
quick_check, read-only) and disk space; the admin token when ADMIN_PORT is set; the model
(one request of one token); each chat bot's login. Exits 1 when anything is ✗ (or
skipped because an earlier check failed). As root, the sandbox check gives the agents'
folders the owners and modes \`laoding start\` gives them. See docs/doctor.md.

Options:
${WORKSPACE_FLAG.help()}
  --json            print one JSON document { ok, checks: [{ id, ok, title, detail, fix }] }
  -h, --help        show this help`;

export const doctorCommand: Command = {
  name: "doctor",
  summary: "check the configuration, sandbox, model, bots, database and disk, with a fix for each problem",
  usage,
  async run(context) {
    const { values } = parseFlags(context.args, { ...WORKSPACE_FLAG.option, json: { type: "boolean" } }, usage);
    if (values.help) return (writeLine(context.stdout, usage), 0);
    const toTerminal = (context.stdout as NodeJS.WriteStream).isTTY === true;
    const run = await runDoctor({
      config: {
        env: context.env,
        repoRoot: context.repoRoot,
        cwd: context.cwd,
        ...(values.workspace ? { workspaceDir: values.workspace } : {}),
      },
      node: { running: process.version, required: requiredNode() },
      isRoot: process.getuid?.() === 0,
      cliEntry: CLI_ENTRY,
      exists: existsSync,
      readText: (path) => (existsSync(path) ? readFileSync(path, "utf8") : undefined),
      statfs: (path) => statfsSync(path),
      prepareLaunches: prepareToolhostLaunches,
      createModel: createOpenAIChatModel,
      logger: createLogger({ level: "silent", secrets: [] }),
      // Progress only for a person watching: a pipe or --json gets the report alone.
      progress: (text) => {
        if (toTerminal && !values.json) writeLine(context.stderr, `… ${text}`);
      },
    });
    const secrets = secretsOf(context, run);
    context.stdout.write(values.json ? renderJson(run.results, secrets) : renderText(run.results, secrets));
    return doctorOk(run.results) ? 0 : 1;
  },
};

/** Every secret value known: the configuration's secret variables and the bot credentials agents.json names. */
function secretsOf(context: CliContext, run: DoctorRun): string[] {
  const fromConfig = run.loaded && run.agents ? configuredSecrets(run.loaded, run.agents) : [];
  return [...new Set([...fromConfig, ...environmentSecrets(context.env)])];
}

/** package.json's engines.node of this checkout (the code that runs). */
function requiredNode(): string | undefined {
  try {
    return (JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as { engines?: { node?: string } })
      .engines?.node;
  } catch {
    return undefined;
  }
}
