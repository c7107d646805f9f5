/**
 * `laoding toolhost --agent A --mcp`: the agent's tools as an MCP server on stdio. The
 * tools run in the agent's own sandboxed child, started and supervised exactly as the bot
 * does it (createToolhostPool), and every call leaves its audit row in the database.
 * stdout carries only MCP messages; logs go to stderr.
 */
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { chatFolder } from "../../agent/chat-folder.js";
import { newTraceId } from "../../agent/trace-id.js";
import { createToolhostPool } from "../../runtime/toolhost-pool-factory.js";
import type { ToolhostLaunches } from "../../runtime/toolhost-launch.js";
import { systemClock } from "../../store/clock.js";
import { openStore } from "../../store/store.js";
import { createMcpToolServer } from "../../toolhost/mcp/mcp-tool-server.js";
import type { Boot } from "../bootstrap.js";
import { packageVersion } from "../cli-context.js";

export async function serveMcp(options: {
  boot: Boot;
  agentId: string;
  launches: ToolhostLaunches;
  session: string;
}): Promise<number> {
  const { boot, agentId } = options;
  const store = await openStore(boot.layout.databaseTarget, systemClock);
  const pool = createToolhostPool({
    config: boot.loaded.config,
    launches: options.launches,
    store,
    logger: boot.logger,
  });
  const mcp = createMcpToolServer({
    client: pool.client(agentId),
    cwd: chatFolder(boot.layout.agentTrees(agentId), "mcp", options.session),
    version: packageVersion(),
    newTraceId,
  });
  const transport = new StdioServerTransport();
  const { server } = mcp;
  const closed = new Promise<void>((resolve) => (server.onclose = resolve));
  // A client that goes away closes stdin (answers to what it sent still go out); a signal stops at once.
  const stop = () => void server.close();
  process.stdin.once("end", () => void mcp.idle().then(stop));
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
  await server.connect(transport);
  boot.logger.info({ agentId, session: options.session }, "serving the agent's tools over MCP on stdio");
  await closed;
  process.off("SIGTERM", stop);
  process.off("SIGINT", stop);
  await pool.stopAll();
  await store.close();
  return 0;
}
