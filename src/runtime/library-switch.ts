/**
 * The per-agent experience library switch at run time: agent_settings wins over
 * agents.json, read at every message. When the switch no longer matches how the agent's
 * toolhost child was launched, the launch is planned again (library bound or not, link
 * kept or removed, library tools served or not) and the old child is retired: the next
 * call starts the new one. No restart of the bot.
 */
import type { AgentDefinition } from "../config/agents.js";
import type { Logger } from "../log/logger.js";
import type { AgentSettingsStore } from "../store/agent-settings-store.js";
import type { ToolhostClient } from "../toolhost/client/toolhost-client.js";
import type { ToolhostPool } from "../toolhost/client/toolhost-pool.js";
import type { AgentLaunch, ToolhostLaunches } from "./toolhost-launch.js";

export type LibrarySwitch = {
  enabled(agentId: string): Promise<boolean>;
  /** The agent's toolhost client, relaunched first when the switch flipped. */
  toolhost(agentId: string): Promise<ToolhostClient>;
};

export function createLibrarySwitch(options: {
  agents: AgentDefinition[];
  settings: AgentSettingsStore;
  launches: ToolhostLaunches;
  toolhosts: ToolhostPool;
  /** Plans the agent's launch again with the library on or off (probed, as at start-up). */
  replan: (agent: AgentDefinition, libraryEnabled: boolean) => AgentLaunch;
  logger: Logger;
}): LibrarySwitch {
  const agents = new Map(options.agents.map((agent) => [agent.id, agent]));
  const enabled = async (agentId: string) =>
    (await options.settings.experienceLibrary(agentId)) ?? agents.get(agentId)?.experienceLibrary ?? false;
  return {
    enabled,
    async toolhost(agentId) {
      const wanted = await enabled(agentId);
      // From here on synchronous: two calls at once cannot both relaunch for one flip.
      const agent = agents.get(agentId);
      const launch = options.launches.agents.get(agentId);
      if (agent && launch && (launch.startup.library !== undefined) !== wanted) {
        try {
          options.launches.agents.set(agentId, options.replan(agent, wanted));
          options.toolhosts.retire(agentId);
          options.logger.info(
            { agentId, experienceLibrary: wanted },
            "experience library switched: the agent's toolhost is relaunched",
          );
        } catch (error) {
          // The old launch keeps serving; the next message tries again.
          options.logger.error({ err: error, agentId }, "cannot relaunch the toolhost for the library switch");
        }
      }
      return options.toolhosts.client(agentId);
    },
  };
}
