/**
 * Checks at start-up that the OS sandbox can run for every agent, so a misconfiguration
 * stops `laoding start` with its reason instead of surfacing on the first tool call.
 * TOOLHOST_SANDBOX=bwrap that cannot work is fatal; auto reports what it fell back to.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AgentDefinition } from "../config/agents.js";
import type { Config } from "../config/load-config.js";
import type { RuntimeLayout } from "../config/runtime-layout.js";
import { prepareSandbox } from "../toolhost/os-sandbox.js";
import { sandboxRequestFor } from "../toolhost/server/child-main.js";

export type SandboxPreflight = { mode: "bwrap" | "none"; warnings: string[] };

export function preflightSandbox(config: Config, layout: RuntimeLayout, agents: AgentDefinition[]): SandboxPreflight {
  if (config.TOOLHOST_SANDBOX === "none") return { mode: "none", warnings: [] };
  const warnings: string[] = [];
  let mode: "bwrap" | "none" = "bwrap";
  for (const agent of agents) {
    const runtimeDir = mkdtempSync(join(tmpdir(), `laoding-preflight-${agent.id}-`));
    try {
      const setup = prepareSandbox(sandboxRequestFor(config, layout, agent, runtimeDir).request);
      if (setup.warning) warnings.push(`agent ${agent.id}: ${setup.warning}`);
      if (setup.launcher.mode === "none") mode = "none";
    } finally {
      rmSync(runtimeDir, { recursive: true, force: true });
    }
  }
  return { mode, warnings };
}
