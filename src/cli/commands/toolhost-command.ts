import { runToolhostChild } from "../../toolhost/server/child-main.js";
import { bootstrap } from "../bootstrap.js";
import { UsageError, writeLine, type Command } from "../cli-context.js";
import { parseFlags } from "../parse-flags.js";

const usage = `Usage: laoding toolhost --agent ID [--workspace DIR]

Runs an agent's tool host on stdin/stdout (JSON-RPC 2.0 with Content-Length framing).
The bot starts one per agent by itself; run it by hand only to debug (docs/toolhost.md).

Options:
  --agent ID        the agent whose tools to serve
  --workspace DIR   workspace folder (overrides AGENT_WORKSPACE_DIR)
  -h, --help        show this help`;

export const toolhostCommand: Command = {
  name: "toolhost",
  summary: "serve an agent's tools over JSON-RPC on stdio (started by the bot)",
  usage,
  async run(context) {
    const { values } = parseFlags(context.args, { agent: { type: "string" }, workspace: { type: "string" } }, usage);
    if (values.help) return writeLine(context.stderr, usage), 0;
    if (!values.agent) throw new UsageError("--agent is required", usage);
    const boot = bootstrap(context, { seed: false, workspaceDir: values.workspace, logBase: { component: "toolhost", agentId: values.agent } });
    const agent = boot.agents.find((candidate) => candidate.id === values.agent);
    if (!agent) throw new Error(`no agent "${values.agent}" in ${boot.layout.agentsFile}; known: ${boot.agents.map((a) => a.id).join(", ")}`);
    return runToolhostChild({ agent, config: boot.loaded.config, layout: boot.layout, logger: boot.logger, stdin: context.stdin, stdout: context.stdout });
  },
};
