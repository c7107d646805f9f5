/**
 * The admin API's composition root, shared by `laoding admin` and `laoding start` (when
 * ADMIN_PORT is set): its own database connection (SQLite in WAL mode: the bot's
 * connection sees its writes at once; or its own PostgreSQL pool), the operator's
 * maintenance toolhosts, the service and the server.
 *
 * The admin API starts before the bot's runtime (a bad token stops start-up first), so
 * the bot's toolhosts are handed over afterwards (`attachBot`): from then on
 * `GET /v1/agents/:id/mcp` reports the live state of each agent's MCP servers.
 */
import type { AgentDefinition } from "../config/agents.js";
import type { Config } from "../config/load-config.js";
import type { RuntimeLayout } from "../config/runtime-layout.js";
import type { Logger } from "../log/logger.js";
import { openMaintenancePool } from "../runtime/library-maintenance.js";
import { systemClock } from "../store/clock.js";
import { defaultReplicaName } from "../replica/replica.js";
import { openStore } from "../store/store.js";
import { adminRoutes } from "./admin-routes.js";
import { createAdminService } from "./admin-service.js";
import { pageAssets } from "./page-assets.js";
import { requireAdminToken, startAdminServer, type AdminServer } from "./admin-server.js";
import type { BotToolhosts } from "./mcp-view.js";

export type AdminLaunch = {
  config: Config;
  layout: RuntimeLayout;
  agents: AgentDefinition[] /** The channels the bot runs (for /v1/health). */;
  channels: string[];
  logger: Logger;
  cliEntry: string;
  version: string;
  port: number;
  onWarning: (warning: string) => void;
};

export type LaunchedAdmin = AdminServer & {
  /** The bot in this process has its toolhosts now (`laoding start`): the MCP view reports them live. */
  attachBot(toolhosts: BotToolhosts): void;
};

export async function launchAdmin(options: AdminLaunch): Promise<LaunchedAdmin> {
  const { config } = options;
  // Before anything is opened or probed: no token, no admin API.
  requireAdminToken(config.ADMIN_TOKEN);
  const logger = options.logger.child({ component: "admin" });
  const store = await openStore(options.layout.databaseTarget, systemClock, {
    onIdleError: (error) =>
      logger.warn({ err: error }, "the database dropped an idle connection; the next query opens another"),
    maxConnections: config.DATABASE_POOL_MAX,
  });
  let maintenance: ReturnType<typeof openMaintenancePool> | undefined;
  let botToolhosts: BotToolhosts | undefined;
  try {
    maintenance = openMaintenancePool({
      config,
      layout: options.layout,
      agents: options.agents,
      store,
      logger,
      cliEntry: options.cliEntry,
      onWarning: options.onWarning,
    });
    const service = createAdminService({
      agents: options.agents,
      store,
      maintenance,
      clock: systemClock,
      version: options.version,
      channels: options.channels,
      defaultLookbackHours: config.GAP_CLUSTER_LOOKBACK_HOURS,
      docMaxBytes: config.ADMIN_DOC_MAX_BYTES,
      // The bot's replica in this process has the same name (REPLICA_NAME, or this host and pid).
      replica: { name: config.REPLICA_NAME ?? defaultReplicaName(), leaseMs: config.REPLICA_LEASE_MS },
      botToolhosts: () => botToolhosts,
    });
    const server = await startAdminServer({
      host: config.ADMIN_HOST,
      port: options.port,
      token: config.ADMIN_TOKEN,
      bodyMaxBytes: config.ADMIN_BODY_MAX_BYTES,
      routes: adminRoutes(service),
      page: pageAssets({ locale: config.BOT_LOCALE }),
      logger,
    });
    logger.info({ url: server.url }, "admin API listening");
    const pool = maintenance;
    return {
      ...server,
      attachBot(toolhosts) {
        botToolhosts = toolhosts;
      },
      async close() {
        botToolhosts = undefined;
        await server.close();
        await pool.close();
        await store.close();
      },
    };
  } catch (error) {
    await maintenance?.close();
    await store.close();
    throw error;
  }
}
