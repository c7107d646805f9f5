/** Builds the toolhost pool from the configuration: the planned launches and the audit trail. */
import type { Config } from "../config/load-config.js";
import { SECRET_VARIABLES } from "../config/variables.js";
import type { Logger } from "../log/logger.js";
import { createRedactor } from "../log/redact.js";
import type { Store } from "../store/store.js";
import { DEFAULT_START_TIMEOUT_MS, DEFAULT_STOP_GRACE_MS, ToolhostPool } from "../toolhost/client/toolhost-pool.js";
import { mcpConfigureMethod } from "../toolhost/protocol.js";
import { spawnToolhostChild, type ToolhostLaunches } from "./toolhost-launch.js";

export function createToolhostPool(options: {
  config: Config;
  launches: ToolhostLaunches;
  store: Store;
  logger: Logger;
  childStderr?: () => number;
  /** Secret values the audited arguments must not hold (configuredSecrets); default: the configuration's secret variables. */
  secrets?: readonly string[];
}): ToolhostPool {
  const { config } = options;
  options.store.toolCalls.onFlushError((error, failure) =>
    failure.of === "outcomes"
      ? options.logger.error(
          { err: error, ...failure },
          "the database refused the outcomes of tool calls (their intent rows are stored; the outcomes are tried again with the next calls); check its disk space and permissions",
        )
      : options.logger.error(
          { err: error, ...failure },
          "the database refused tool-call audit rows (calls with effects waiting for them were not sent, reads had their results withheld); check its disk space and permissions; kept rows are tried again with the next calls",
        ),
  );
  const secrets =
    options.secrets ??
    SECRET_VARIABLES.flatMap((key) => {
      const value = config[key];
      return typeof value === "string" && value !== "" ? [value] : [];
    });
  return new ToolhostPool({
    settings: {
      callTimeoutMs: config.TOOLHOST_CALL_TIMEOUT_MS,
      heartbeatMs: config.TOOLHOST_HEARTBEAT_MS,
      restartLimit: config.TOOLHOST_RESTART_LIMIT,
      restartWindowMs: config.TOOLHOST_RESTART_WINDOW_MS,
      concurrency: config.TOOLHOST_CONCURRENCY,
      queueMax: config.TOOLHOST_QUEUE_MAX,
      maxFrameBytes: config.TOOLHOST_MAX_FRAME_BYTES,
      startTimeoutMs: DEFAULT_START_TIMEOUT_MS,
      stopGraceMs: DEFAULT_STOP_GRACE_MS,
      idleStopMs: config.TOOLHOST_IDLE_STOP_MS,
    },
    spawn: (agentId) => {
      const launch = options.launches.agents.get(agentId);
      if (!launch) throw new Error(`no toolhost launch was prepared for agent ${agentId}`);
      return spawnToolhostChild(launch, ["pipe", "pipe", options.childStderr?.() ?? "inherit"]);
    },
    logger: options.logger,
    initialize: async (agentId, connection) => {
      const mcp = options.launches.agents.get(agentId)?.mcp;
      if (mcp) await connection.request(mcpConfigureMethod, mcp, { timeoutMs: DEFAULT_START_TIMEOUT_MS });
    },
    audit: options.store.toolCalls,
    redact: createRedactor(secrets).redact,
  });
}
