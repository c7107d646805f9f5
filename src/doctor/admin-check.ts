/**
 * The admin API's token when ADMIN_PORT is set: the API refuses to start without one,
 * and the configuration already refuses one shorter than 16 characters (variables.ts).
 */
import type { Config } from "../config/load-config.js";
import { failed, passed, type CheckResult } from "./check-result.js";

export function checkAdmin(
  config: Pick<Config, "ADMIN_PORT" | "ADMIN_TOKEN" | "ADMIN_HOST">,
  envFile: string,
): CheckResult {
  if (config.ADMIN_PORT === 0) return passed("admin", "admin API (not configured: ADMIN_PORT=0)");
  const title = `admin API on ${config.ADMIN_HOST}:${config.ADMIN_PORT}`;
  if (!config.ADMIN_TOKEN)
    return failed(
      "admin",
      title,
      "ADMIN_PORT is set but ADMIN_TOKEN is not: the admin API refuses to start without a token",
      `Set ADMIN_TOKEN in ${envFile} to a random string of at least 16 characters: ADMIN_TOKEN=$(openssl rand -hex 24)`,
    );
  return passed("admin", `${title} (ADMIN_TOKEN set, ${config.ADMIN_TOKEN.length} characters)`);
}
