import { prepareToolhostLaunches, spawnToolhostChild } from "../../runtime/toolhost-launch.js";
import { bootstrap } from "../bootstrap.js";
import { CLI_ENTRY, UsageError, writeLine, type Command } from "../cli-context.js";
import { parseFlags } from "../parse-flags.js";

const usage = `Usage: laoding toolhost --agent ID [--workspace DIR]

Runs an agent's tool host on stdin/stdout (JSON-RPC 2.0 with Content-Length framing),
exactly as the bot starts it: the same start-up message, sandbox and uid. The bot starts
one per agent by itself; run it by hand only to debug (docs/toolhost.md).

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
    // This process read the configuration; the child that serves gets only its start-up
    // message and its agent's authority, like the ones the bot starts.
    const launches = prepareToolhostLaunches({ config: boot.loaded.config, layout: boot.layout, agents: [agent], cliEntry: CLI_ENTRY });
    for (const warning of launches.warnings) boot.logger.warn(warning);
    const child = spawnToolhostChild(launches.agents.get(agent.id) as NonNullable<ReturnType<typeof launches.agents.get>>, "inherit");
    const forward = (signal: NodeJS.Signals) => () => child.kill(signal);
    const handlers = (["SIGTERM", "SIGINT"] as const).map((signal) => [signal, forward(signal)] as const);
    for (const [signal, handler] of handlers) process.on(signal, handler);
    return new Promise<number>((resolve) => {
      child.once("error", (error) => resolve((writeLine(context.stderr, `cannot start the toolhost: ${error.message}`), 1)));
      child.once("exit", (code, signal) => {
        for (const [name, handler] of handlers) process.off(name, handler);
        resolve(code ?? (signal ? 128 : 1));
      });
    });
  },
};
