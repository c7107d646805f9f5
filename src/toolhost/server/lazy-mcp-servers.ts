/**
 * The agent's MCP servers, loaded only when the parent configures at least one: the MCP
 * SDK's client, its schemas and ajv cost every child about 13 MiB and 0.6 s at start
 * (measured with the child's own imports), and most agents have no server. Until then,
 * the list is empty and `mcp.status` shows the configured servers as idle.
 */
import type { McpServers } from "../mcp-servers/mcp-servers.js";
import type { McpConfigureParams, McpServerStatus } from "../protocol.js";

export function lazyMcpServers(load: () => Promise<McpServers>): McpServers {
  let real: McpServers | undefined;
  let loading: Promise<McpServers> | undefined;
  let configured: McpConfigureParams | undefined;
  // A failed load is tried again at the next use, never kept: a kept rejection would take
  // every later tool list with it, built-in tools included.
  const ensure = () =>
    (loading ??= load().then(
      (servers) => {
        real = servers;
        if (configured) servers.configure(configured);
        return servers;
      },
      (error: unknown) => {
        loading = undefined;
        throw error;
      },
    ));
  const wanted = () => real !== undefined || loading !== undefined || (configured?.servers.length ?? 0) > 0;
  return {
    configure(params) {
      configured = params;
      if (real) real.configure(params);
      else if (params.servers.length > 0) void ensure();
    },
    tools: () => (real ? real.tools() : wanted() ? ensure().then((servers) => servers.tools()) : Promise.resolve([])),
    find: (name) => (real ? real.find(name) : wanted() ? ensure().then((servers) => servers.find(name)) : undefined),
    names: () => real?.names() ?? [],
    status: () =>
      real?.status() ??
      (configured?.servers ?? []).map(
        (server): McpServerStatus => ({
          name: server.name,
          transport: server.transport,
          state: "idle",
          tools: [],
          restarts: 0,
        }),
      ),
    test: (server) =>
      wanted()
        ? ensure().then((servers) => servers.test(server))
        : Promise.resolve({
            ok: false,
            tools: [],
            error: `no MCP server named ${server} is configured`,
            durationMs: 0,
          }),
    stopAll: () => (real ? real.stopAll() : loading ? loading.then((servers) => servers.stopAll()) : Promise.resolve()),
  };
}
