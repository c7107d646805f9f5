/**
 * The bot's egress proxy: one per bot process, in the parent, outside every jail. Each
 * agent with an allow list gets its own Unix socket, `<socketDir>/<agentId>.sock` (mode
 * 0600, owned by the agent's uid when the bot is root), bind-mounted into that agent's
 * jail; which socket a connection arrives on is the agent's identity, so nothing a client
 * says can claim another agent's list. The wire protocol is a plain HTTP/1.1 forward
 * proxy (CONNECT tunnels and absolute-form requests); refusals and failures use the
 * contract's 403/502 shapes (proxy-responses.ts), and each connection is logged once at
 * info as "egress connection" (never headers or paths: they may hold secrets).
 */
import { unlink } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { join } from "node:path";
import type { Logger } from "pino";
import { bindAgentSocket, ensureSocketDir, type SocketOwner } from "./agent-socket.js";
import type { AllowList } from "./allow-list.js";
import { handleConnect } from "./connect-handler.js";
import { decideEgress, type EgressLookup, type OwnEndpoint } from "./egress-decision.js";
import type { EgressHosts } from "./egress-hosts.js";
import { tryParseIpAddress } from "./ip-address.js";
import { handlePlainRequest } from "./plain-request-handler.js";
import type { ConnectionRecord, ProxyContext } from "./proxy-context.js";
import { rawProblemResponse } from "./proxy-responses.js";
import { systemLookup, withDeadline } from "./system-lookup.js";

export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
export const DEFAULT_IDLE_TIMEOUT_MS = 300_000;
export const DEFAULT_MAX_CONNECTIONS_PER_AGENT = 64;
/** A request head (request line and headers) larger than this is refused with 400. */
export const MAX_REQUEST_HEAD_BYTES = 64 * 1024;
/** How long a client may take to send a request's head. */
export const HEAD_TIMEOUT_MS = 30_000;
const AGENT_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

export type EgressProxyOptions = {
  /** Where the agents' sockets live; created with mode 0711 when missing. */
  readonly socketDir: string;
  /** The EGRESS_HOSTS mapping (an empty map when the variable is unset). */
  readonly hosts: EgressHosts;
  /** The bot's own listeners: admin, webhooks, the model endpoint. */
  readonly ownEndpoints: readonly OwnEndpoint[];
  readonly logger: Pick<Logger, "info" | "warn">;
  /** Resolves a name to all its addresses; default dns.lookup (all, in the resolver's order). */
  readonly lookup?: EgressLookup;
  readonly connectTimeoutMs?: number;
  readonly idleTimeoutMs?: number;
  readonly maxConnectionsPerAgent?: number;
};

export type EgressAgent = {
  readonly agentId: string;
  readonly allow: AllowList;
  /** The agent's uid and gid: the socket is chowned to them (the bot runs as root). */
  readonly owner?: SocketOwner;
};

export type EgressStats = {
  /** Connections the list allowed that reached their destination. */
  allowed: number;
  /** Connections the list refused (403). */
  refused: number;
  /** Allowed connections whose destination could not be resolved or reached (502). */
  failed: number;
  bytesUp: number;
  bytesDown: number;
  lastRefusal?: { host: string; port: number; reason: string };
};

export type EgressProxy = {
  /** Opens the agent's socket and returns its path. */
  addAgent(agent: EgressAgent): Promise<string>;
  /** Closes the agent's socket and every connection through it. */
  removeAgent(agentId: string): Promise<void>;
  socketFor(agentId: string): string | undefined;
  /** A copy of the agent's counters, undefined for an agent without a socket. */
  stats(agentId: string): EgressStats | undefined;
  close(): Promise<void>;
};

type AgentState = {
  readonly socketPath: string;
  server?: Server;
  /** Set once our bind succeeded: only then is the file at socketPath ours to remove. */
  bound?: boolean;
  /** Connections from the agent, and the proxy's connections to origins: both ended with the agent. */
  readonly clients: Set<Socket>;
  readonly upstreams: Set<Socket>;
  readonly stats: EgressStats;
};

export function startEgressProxy(options: EgressProxyOptions): EgressProxy {
  for (const endpoint of options.ownEndpoints)
    if (!tryParseIpAddress(endpoint.address) || !Number.isInteger(endpoint.port))
      throw new Error(
        `own endpoint "${endpoint.label}" has address ${JSON.stringify(endpoint.address)} and port ${endpoint.port}; give an IP address and a port (resolve names before starting the proxy)`,
      );
  ensureSocketDir(options.socketDir);
  const connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  const idleTimeoutMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  const maxConnections = options.maxConnectionsPerAgent ?? DEFAULT_MAX_CONNECTIONS_PER_AGENT;
  const lookup = withDeadline(options.lookup ?? systemLookup, connectTimeoutMs);
  const agents = new Map<string, AgentState>();

  const contextFor = (agentId: string, allow: AllowList, state: AgentState): ProxyContext => ({
    agentId,
    connectTimeoutMs,
    idleTimeoutMs,
    decide: (target) =>
      decideEgress({ allow, ...target, hosts: options.hosts, lookup, ownEndpoints: options.ownEndpoints }),
    record: (connection) => record(agentId, state.stats, connection),
    rejectBadRequest: (reason) => options.logger.info({ agentId, reason }, "egress request rejected"),
    track: (socket) => trackSocket(state.upstreams, socket),
  });

  const record = (agentId: string, stats: EgressStats, connection: ConnectionRecord) => {
    if (!connection.allowed) {
      stats.refused += 1;
      stats.lastRefusal = { host: connection.host, port: connection.port, reason: connection.reason ?? "" };
    } else if (connection.failed) stats.failed += 1;
    else stats.allowed += 1;
    stats.bytesUp += connection.bytesUp;
    stats.bytesDown += connection.bytesDown;
    options.logger.info({ agentId, ...connection }, "egress connection");
  };

  const serverFor = (context: ProxyContext, state: AgentState): Server => {
    // requestTimeout 0: a long upload is bounded by the idle timeout, not by a total. The
    // head still has its own deadline (0 with requestTimeout 0, unless set): a client that
    // trickles a head forever would otherwise hold one of the agent's connections for good.
    const server = createServer({
      maxHeaderSize: MAX_REQUEST_HEAD_BYTES,
      requestTimeout: 0,
      headersTimeout: HEAD_TIMEOUT_MS,
    });
    // A client may half-close once its request is sent (`curl` with a body from a pipe,
    // the child's forwarder passing a half-close on): node:http would abort the request at
    // the client's end of input. Its `httpAllowHalfOpen` switch (not in the typings) keeps
    // the exchange going, so the answer still arrives, as it would from the origin itself.
    (server as Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
    const crash = (error: unknown) =>
      options.logger.warn({ agentId: context.agentId, err: error }, "egress proxy handler failed");
    // Over the limit: answered once and closed; node:http may still parse what the client
    // already sent, so the handlers skip these sockets.
    const overLimit = new WeakSet<Socket>();
    server.on("connection", (socket: Socket) => {
      if (state.clients.size >= maxConnections) {
        overLimit.add(socket);
        socket.on("error", () => socket.destroy());
        socket.end(
          rawProblemResponse(
            "busy",
            `this agent already has ${maxConnections} connections open through the egress proxy; close some and try again`,
          ),
        );
        return;
      }
      trackSocket(state.clients, socket);
    });
    const plain = (request: IncomingMessage, response: ServerResponse) => {
      if (overLimit.has(request.socket)) return;
      handlePlainRequest(context, request, response).catch((error: unknown) => {
        // Never leave a client waiting on an answer that will not come.
        request.socket.destroy();
        crash(error);
      });
    };
    server.on("request", plain);
    // Expect: 100-continue is answered by the handler once the destination is allowed and reached.
    server.on("checkContinue", plain);
    server.on("connect", (request, socket: Socket, head: Buffer) => {
      if (overLimit.has(socket)) return;
      handleConnect(context, request, socket, head).catch((error: unknown) => {
        socket.destroy();
        crash(error);
      });
    });
    server.on("clientError", (error: NodeJS.ErrnoException, socket: Socket) => {
      if (error.code === "ECONNRESET" || !socket.writable) {
        socket.destroy();
        return;
      }
      const reason =
        error.code === "HPE_HEADER_OVERFLOW"
          ? `the request head is over ${MAX_REQUEST_HEAD_BYTES / 1024} KiB`
          : error.code === "ERR_HTTP_REQUEST_TIMEOUT"
            ? "the request head did not arrive in time"
            : `the request is not valid HTTP/1.1 (${error.code ?? error.message})`;
      socket.end(rawProblemResponse("bad-request", reason));
      context.rejectBadRequest(reason);
    });
    return server;
  };

  const removeAgent = async (agentId: string) => {
    const state = agents.get(agentId);
    if (!state) return;
    agents.delete(agentId);
    for (const socket of [...state.clients, ...state.upstreams]) socket.destroy();
    if (state.server) await new Promise<void>((resolve) => state.server?.close(() => resolve()));
    if (state.bound) await unlink(state.socketPath).catch(() => undefined);
  };

  return {
    async addAgent({ agentId, allow, owner }) {
      if (!AGENT_ID.test(agentId))
        throw new Error(
          `agent id ${JSON.stringify(agentId)} cannot name an egress socket; use [A-Za-z0-9_-], at most 64`,
        );
      if (agents.has(agentId)) throw new Error(`agent ${agentId} already has an egress socket; remove it first`);
      const socketPath = join(options.socketDir, `${agentId}.sock`);
      const state: AgentState = { socketPath, clients: new Set(), upstreams: new Set(), stats: emptyStats() };
      agents.set(agentId, state);
      try {
        const server = serverFor(contextFor(agentId, allow, state), state);
        state.server = server;
        await bindAgentSocket(server, socketPath, owner, () => {
          state.bound = true;
        });
      } catch (error) {
        await removeAgent(agentId);
        throw error;
      }
      return socketPath;
    },
    removeAgent,
    socketFor: (agentId) => agents.get(agentId)?.socketPath,
    stats: (agentId) => {
      const stats = agents.get(agentId)?.stats;
      return stats && { ...stats, ...(stats.lastRefusal ? { lastRefusal: { ...stats.lastRefusal } } : {}) };
    },
    async close() {
      await Promise.all([...agents.keys()].map(removeAgent));
    },
  };
}

function emptyStats(): EgressStats {
  return { allowed: 0, refused: 0, failed: 0, bytesUp: 0, bytesDown: 0 };
}

function trackSocket(sockets: Set<Socket>, socket: Socket): void {
  sockets.add(socket);
  socket.once("close", () => sockets.delete(socket));
}
