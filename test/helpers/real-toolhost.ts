/**
 * A real runtime workspace with agents `a` and `b`, and real toolhost children started
 * exactly as the bot starts them: the launches planned (and probed) by the product, and
 * its own spawn function.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { lstatSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { readAgentsFile } from "../../src/config/agents.js";
import { createRuntimeLayout, type RuntimeLayout } from "../../src/config/runtime-layout.js";
import { loadConfig, type Config } from "../../src/config/load-config.js";
import {
  prepareToolhostLaunches,
  spawnToolhostChild,
  type ToolhostLaunches,
} from "../../src/runtime/toolhost-launch.js";
import { runLaoding } from "./cli.js";
import { fakeRepo, REAL_REPO_ROOT, tempDir } from "./temp-dir.js";
import { makeClient } from "./toolhost.js";

export const CLI_ENTRY = join(REAL_REPO_ROOT, "src/cli/main.ts");

export type RealWorkspace = {
  repoRoot: string;
  workspaceDir: string;
  layout: RuntimeLayout;
  config: Config;
  launches(): ToolhostLaunches;
};

/** Seeds a workspace that lives for the whole test file (create it in beforeAll). */
export async function realWorkspace(settings: Record<string, string>): Promise<RealWorkspace> {
  const repoRoot = fakeRepo({ scope: "file" });
  writeFileSync(
    join(repoRoot, "configs/agents.json"),
    JSON.stringify({
      agents: [
        { id: "a", name: "A" },
        { id: "b", name: "B" },
      ],
    }),
  );
  const workspaceDir = join(tempDir("laoding-iso-", "file"), "rt");
  const seeded = await runLaoding(["init", "--workspace", workspaceDir], { repoRoot });
  if (seeded.code !== 0) throw new Error(seeded.stderr);
  const env = Object.entries({
    REACT_MAX_STEPS: "4",
    LLM_API_KEY: "sk-secret-in-env-file-123",
    LOG_LEVEL: "error",
    ...settings,
  })
    .map(([key, value]) => `${key}=${value}`)
    .join("\n");
  writeFileSync(join(workspaceDir, "configs/env"), `${env}\n`);
  const loaded = loadConfig({ env: {}, repoRoot, cwd: repoRoot, workspaceDir });
  const layout = createRuntimeLayout(workspaceDir, loaded.config);
  let launches: ToolhostLaunches | undefined;
  return {
    repoRoot,
    workspaceDir,
    layout,
    config: loaded.config,
    // Planned on first use, as the bot does at start-up (as root this sets the trees' owners and modes).
    launches: () =>
      (launches ??= prepareToolhostLaunches({
        config: loaded.config,
        layout,
        agents: readAgentsFile(layout.agentsFile),
        cliEntry: CLI_ENTRY,
      })),
  };
}

/** A client whose spawn starts the real child; with `scope: "file"` it lives for the whole file. */
export function realClient(workspace: RealWorkspace, agentId: string, options: Parameters<typeof makeClient>[0] = {}) {
  // Planned now, as at the bot's start-up: the trees get their owners and modes before the test looks.
  workspace.launches();
  return makeClient({
    startTimeoutMs: 20_000,
    ...options,
    spawn: () =>
      spawnToolhostChild(
        workspace.launches().agents.get(agentId) as NonNullable<ReturnType<ToolhostLaunches["agents"]["get"]>>,
      ),
  });
}

/**
 * Hands files a test planted as root over to the agent, as an operator would (chown):
 * when the bot runs as root, an agent's tools run as its own uid and cannot change root's files.
 */
export function giveToAgent(workspace: RealWorkspace, agentId: string, ...paths: string[]): void {
  const launch = workspace.launches().agents.get(agentId);
  if (launch?.uid === undefined) return;
  for (const path of paths) execFileSync("chown", ["-R", "--no-dereference", `${launch.uid}:${launch.uid}`, path]);
}

/** A digest of a tree: names, types, sizes, link targets and file contents. */
export function hashTree(root: string): string {
  const hash = createHash("sha256");
  const walk = (dir: string) => {
    let names: string[];
    try {
      names = readdirSync(dir).sort();
    } catch {
      hash.update(`missing ${dir}\n`);
      return;
    }
    for (const name of names) {
      const path = join(dir, name);
      const stats = lstatSync(path);
      hash.update(`${path} ${stats.mode} ${stats.size}\n`);
      if (stats.isSymbolicLink()) hash.update(readlinkSync(path));
      else if (stats.isDirectory()) walk(path);
      else if (stats.isFile()) hash.update(readFileSync(path));
    }
  };
  walk(root);
  return hash.digest("hex");
}
