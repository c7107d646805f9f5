import { renderEnvExample } from "../../config/env-example.js";
import { describeSource } from "../../config/load-config.js";
import { VARIABLES, VARIABLE_NAMES, type VariableSpec } from "../../config/variables.js";
import { bootstrap } from "../bootstrap.js";
import { writeLine, type Command } from "../cli-context.js";
import { parseFlags, WORKSPACE_FLAG } from "../parse-flags.js";

const usage = `Usage: laoding config [--workspace DIR] [--json]

Prints the effective configuration: every variable, its value and where the value came
from (the environment, an env file, or the built-in default). Secrets are masked.

Options:
${WORKSPACE_FLAG.help()}
  --json            machine-readable output
  --env-example     print the documented list of every variable (configs/env.example)
  -h, --help        show this help`;

export function maskSecret(value: string): string {
  return value.length <= 8 ? "****" : `${value.slice(0, 2)}****${value.slice(-2)}`;
}

export const configCommand: Command = {
  name: "config",
  summary: "print the effective configuration and its sources; `config --env-example` documents every variable",
  usage,
  async run(context) {
    const { values } = parseFlags(
      context.args,
      { ...WORKSPACE_FLAG.option, json: { type: "boolean" }, "env-example": { type: "boolean" } },
      usage,
    );
    if (values.help) return (writeLine(context.stdout, usage), 0);
    if (values["env-example"]) return (context.stdout.write(renderEnvExample()), 0);
    const { loaded, layout, agents } = bootstrap(context, { seed: false, workspaceDir: values.workspace });
    const rows = VARIABLE_NAMES.map((name) => {
      const spec: VariableSpec = VARIABLES[name];
      const raw = loaded.raw[name];
      const source = loaded.sources[name];
      return {
        name,
        value: raw === undefined ? null : spec.secret ? maskSecret(raw) : raw,
        source: source ? describeSource(source) : "unset",
      };
    });
    if (values.json) {
      writeLine(
        context.stdout,
        JSON.stringify(
          {
            workspace: layout.workspaceDir,
            filesRead: loaded.filesRead,
            variables: rows,
            agents: agents.map((agent) => agent.id),
            allowedCommands: layout.allowedCommands,
            extraAllowedDirs: layout.extraAllowedDirs,
          },
          null,
          2,
        ),
      );
      return 0;
    }
    writeLine(context.stdout, `workspace   ${layout.workspaceDir}`);
    writeLine(context.stdout, `env files   ${loaded.filesRead.length > 0 ? loaded.filesRead.join(", ") : "(none)"}`);
    writeLine(context.stdout, `agents      ${agents.map((agent) => agent.id).join(", ")}`);
    writeLine(context.stdout);
    const width = Math.max(...rows.map((row) => row.name.length));
    for (const row of rows) {
      writeLine(
        context.stdout,
        `${row.name.padEnd(width)}  ${row.value === null ? "(unset)" : row.value}  [${row.source}]`,
      );
    }
    writeLine(context.stdout);
    writeLine(context.stdout, `effective ALLOWED_COMMANDS: ${layout.allowedCommands.join(",")}`);
    writeLine(
      context.stdout,
      `effective ALLOWED_DIRS (besides each agent's own trees): ${layout.extraAllowedDirs.join(",") || "(none)"}`,
    );
    return 0;
  },
};
