/**
 * The operator's library commands (`laoding library list|index|rebuild`) run through the
 * agent's own toolhost child, as the running bot's refreshes do: the CLI, often run as
 * root, never opens a path inside an agent's tree itself (DECISIONS.md, boundary).
 */
import { join } from "node:path";
import type { AgentDefinition } from "../config/agents.js";
import type { Config } from "../config/load-config.js";
import type { RuntimeLayout } from "../config/runtime-layout.js";
import { INDEX_FILE } from "../knowledge/library/library-doc.js";
import type { Logger } from "../log/logger.js";
import type { Store } from "../store/store.js";
import type { ToolhostClient } from "../toolhost/client/toolhost-client.js";
import type { ToolResult } from "../toolhost/protocol.js";
import { prepareToolhostLaunches } from "./toolhost-launch.js";
import { createToolhostPool } from "./toolhost-pool-factory.js";

/** Lines of INDEX.md per file.read page: an index line is at most ~1.5 KB, well under the output cap. */
const PAGE_LINES = 20;

export type LibraryMaintenance = {
  /** library.index: refresh (or rebuild) and the one-line report. */
  refresh(rebuild: boolean): Promise<string>;
  /** The whole INDEX.md text, read page by page. */
  readIndex(): Promise<string>;
  close(): Promise<void>;
};

export function openLibraryMaintenance(options: { config: Config; layout: RuntimeLayout; agent: AgentDefinition; store: Store; logger: Logger; cliEntry: string; onWarning: (warning: string) => void }): LibraryMaintenance {
  // The library is bound for this child even when switched off for chats: the operator asked for it.
  const launches = prepareToolhostLaunches({ config: options.config, layout: options.layout, agents: [options.agent], cliEntry: options.cliEntry, libraryEnabled: () => true });
  for (const warning of launches.warnings) options.onWarning(warning);
  const pool = createToolhostPool({ config: options.config, launches, store: options.store, logger: options.logger });
  const client: ToolhostClient = pool.client(options.agent.id);
  const indexPath = join(options.layout.agentTrees(options.agent.id).experienceDir, INDEX_FILE);
  return {
    async refresh(rebuild) {
      return expectOk(await client.callTool({ name: "library.index", args: rebuild ? { rebuild: true } : {} }));
    },
    async readIndex() {
      await this.refresh(false);
      const pages: string[] = [];
      for (let offset = 1; ; offset += PAGE_LINES) {
        const result = await client.callTool({ name: "file.read", args: { path: indexPath, offset, limit: PAGE_LINES } });
        const page = expectOk(result);
        if (result.ok && result.truncated) throw new Error(`${indexPath} has a line longer than the tool output cap at line ${offset}`);
        if (page.startsWith(`(no lines at offset ${offset})`)) break;
        pages.push(page.endsWith("\n") ? page : `${page}\n`);
        if (page.split("\n").filter((line, index, lines) => index < lines.length - 1 || line !== "").length < PAGE_LINES) break;
      }
      return pages.join("");
    },
    close: () => pool.stopAll(),
  };
}

function expectOk(result: ToolResult): string {
  if (!result.ok) throw new Error(`${result.error.tool}: ${result.error.code}: ${result.error.reason}`);
  return result.output;
}
