import { prepareToolhostLaunches, spawnToolhostChild } from "../../runtime/toolhost-launch.js";
import { bootstrap } from "../bootstrap.js";
import { CLI_ENTRY, UsageError, writeLine, type Command } from "../cli-context.js";
import { parseFlags, WORKSPACE_FLAG } from "../parse-flags.js";

const usage = `Usage: laoding toolhost --agent ID [--mcp [--session NAME]] [--workspace DIR]

Runs an agent's tool host on stdin/stdout (JSON-RPC 2.0 with Content-Length framing),
exactly as the bot starts it: the same start-up message, sandbox and uid. The bot starts
one per agent by itself; run it by hand only to debug (docs/toolhost.md).

With --mcp, serves the same tools as an MCP server on stdio for any MCP client (Claude
Desktop, the MCP Inspector): the same sandbox, deadlines and audit trail (docs/mcp.md).

Options:
  --agent ID        the agent whose tools to serve
  --mcp             speak MCP (tools/list, tools/call) instead of the toolhost protocol
  --session NAME    with --mcp: the session folder the tools work in (default: mcp),
                    <WORK_DIR>/<agent>/mcp-<NAME>/
${WORKSPACE_FLAG.help()}
  -h, --help        show this help`;

export const toolhostCommand: Command = {
  name: "toolhost",
  summary: "serve an agent's tools over JSON-RPC on stdio (started by the bot)",
  usage,
  async run(context) {
    const { values } = parseFlags(
      context.args,
      { agent: { type: "string" }, ...WORKSPACE_FLAG.option, mcp: { type: "boolean" }, session: { type: "string" } },
      usage,
    );
    if (values.help) return (writeLine(context.stderr, usage), 0);
    if (!values.agent) throw new UsageError("--agent is required", usage);
    const boot = bootstrap(context, {
      seed: false,
      workspaceDir: values.workspace, // In MCP mode the supervised client names its own component and agent in every line.
      logBase: values.mcp ? {} : { component: "toolhost", agentId: values.agent },
    });
    const agent = boot.agents.find((candidate) => candidate.id === values.agent);
    if (!agent)
      throw new Error(
        `no agent "${values.agent}" in ${boot.layout.agentsFile}; known: ${boot.agents.map((a) => a.id).join(", ")}`,
      );
    // This process read the configuration; the child that serves gets only its start-up
    // message and its agent's authority, like the ones the bot starts.
    if (values.session !== undefined && !values.mcp) throw new UsageError("--session goes with --mcp", usage);
    const launches = prepareToolhostLaunches({
      config: boot.loaded.config,
      layout: boot.layout,
      agents: [agent],
      cliEntry: CLI_ENTRY,
    });
    for (const warning of launches.warnings) boot.logger.warn(warning);
    if (values.mcp)
      return (await import("./toolhost-mcp.js")).serveMcp({
        boot,
        agentId: agent.id,
        launches,
        session: values.session ?? "mcp",
      });
    const child = spawnToolhostChild(
      launches.agents.get(agent.id) as NonNullable<ReturnType<typeof launches.agents.get>>,
      "inherit",
    );
    const forward = (signal: NodeJS.Signals) => () => child.kill(signal);
    const handlers = (["SIGTERM", "SIGINT"] as const).map((signal) => [signal, forward(signal)] as const);
    for (const [signal, handler] of handlers) process.on(signal, handler);
    return new Promise<number>((resolve) => {
      child.once("error", (error) =>
        resolve((writeLine(context.stderr, `cannot start the toolhost: ${error.message}`), 1)),
      );
      child.once("exit", (code, signal) => {
        for (const [name, handler] of handlers) process.off(name, handler);
        resolve(code ?? (signal ? 128 : 1));
      });
    });
  },
};
