/**
 * `laoding share verify`: every planned copy is read back by hash and mode through its
 * agent's toolhost, and each agent's real chat toolhost (started as the bot starts it) is
 * asked to list its own private folder, every other agent's trees and the legacy items:
 * it must see the first and none of the rest. The outcome is recorded for `cleanup`.
 */
import { join } from "node:path";
import type { AgentDefinition } from "../config/agents.js";
import type { RuntimeLayout } from "../config/runtime-layout.js";
import type { ToolhostClient } from "../toolhost/client/toolhost-client.js";
import type { SharePlan } from "./share-plan.js";

export type VerifyResult = { passed: boolean; checked: number; problems: string[] };

/**
 * The copies part: every planned copy must be there, identical, and no source may have
 * been refused (a link on the way to an item): it was never copied, and cleanup, which
 * removes by path, must not reach through it.
 */
export function copyProblems(plan: SharePlan): string[] {
  return [
    ...plan.refused,
    ...plan.copies.flatMap((copy) => {
      if (copy.state === "same") return [];
      return [
        `${copy.dest} (agent ${copy.agentId}): ${copy.state === "copy" ? "missing (run apply)" : `differs from ${copy.source}: ${copy.reason ?? "content or mode"}`}`,
      ];
    }),
  ];
}

/** The isolation part: what each agent's own toolhost can list. */
export async function isolationProblems(options: {
  layout: RuntimeLayout;
  agents: AgentDefinition[];
  legacyItems: string[];
  client: (agentId: string) => ToolhostClient;
  report: (line: string) => void;
}): Promise<string[]> {
  const problems: string[] = [];
  for (const agent of options.agents) {
    const client = options.client(agent.id);
    const own = options.layout.agentTrees(agent.id);
    const listed = await client.callTool({ name: "file.list", args: { path: own.privateDir } });
    if (!listed.ok)
      problems.push(`agent ${agent.id} cannot list its own folder ${own.privateDir}: ${listed.error.code}`);
    const foreign = [
      ...options.agents
        .filter((other) => other.id !== agent.id)
        .flatMap((other) => {
          const trees = options.layout.agentTrees(other.id);
          return [trees.privateDir, trees.experienceDir, trees.workTree];
        }),
      ...options.legacyItems,
    ];
    for (const path of foreign) {
      const result = await client.callTool({ name: "file.list", args: { path } });
      if (result.ok || (result.error.code !== "PATH_NOT_ALLOWED" && result.error.code !== "PATH_NOT_FOUND")) {
        problems.push(`agent ${agent.id} can reach ${path} (${result.ok ? "listed" : result.error.code})`);
      }
    }
    options.report(
      `agent ${agent.id}: sees its own folder${problems.length === 0 ? `, none of ${foreign.length} foreign path(s)` : ""}`,
    );
  }
  return problems;
}

/** Legacy item paths at the share root named by the plan's mapping. */
export function legacyItemPaths(shareDir: string, items: { path: string }[]): string[] {
  return items.map((item) => join(shareDir, item.path));
}
