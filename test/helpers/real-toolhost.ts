/**
 * A real runtime workspace with agents `a` and `b`, and real toolhost children started
 * through the product's own spawn function (`laoding toolhost --agent <id>` under tsx).
 */
import { createHash } from "node:crypto";
import { lstatSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createRuntimeLayout, type RuntimeLayout } from "../../src/config/runtime-layout.js";
import { loadConfig } from "../../src/config/load-config.js";
import { VARIABLES, VARIABLE_NAMES, type VariableSpec } from "../../src/config/variables.js";
import { spawnToolhost } from "../../src/toolhost/client/spawn-toolhost.js";
import { runLaoding } from "./cli.js";
import { fakeRepo, REAL_REPO_ROOT, tempDir } from "./temp-dir.js";
import { makeClient } from "./toolhost.js";

export const CLI_ENTRY = join(REAL_REPO_ROOT, "src/cli/main.ts");
export const NON_SECRET_VARIABLES = VARIABLE_NAMES.filter((name) => !(VARIABLES[name] as VariableSpec).secret);

export type RealWorkspace = { repoRoot: string; workspaceDir: string; layout: RuntimeLayout };

/** Seeds a workspace that lives for the whole test file (create it in beforeAll). */
export async function realWorkspace(settings: Record<string, string>): Promise<RealWorkspace> {
  const repoRoot = fakeRepo({ scope: "file" });
  writeFileSync(join(repoRoot, "configs/agents.json"), JSON.stringify({ agents: [{ id: "a", name: "A" }, { id: "b", name: "B" }] }));
  const workspaceDir = join(tempDir("laoding-iso-", "file"), "rt");
  const seeded = await runLaoding(["init", "--workspace", workspaceDir], { repoRoot });
  if (seeded.code !== 0) throw new Error(seeded.stderr);
  const env = Object.entries({ REACT_MAX_STEPS: "4", LLM_API_KEY: "sk-secret-in-env-file-123", ...settings })
    .map(([key, value]) => `${key}=${value}`)
    .join("\n");
  writeFileSync(join(workspaceDir, "configs/env"), `${env}\n`);
  const loaded = loadConfig({ env: {}, repoRoot, cwd: repoRoot, workspaceDir });
  return { repoRoot, workspaceDir, layout: createRuntimeLayout(workspaceDir, loaded.config) };
}

/** A client whose spawn starts the real child; with `scope: "file"` it lives for the whole file. */
export function realClient(workspace: RealWorkspace, agentId: string, options: Parameters<typeof makeClient>[0] = {}) {
  return makeClient({
    ...options,
    spawn: () =>
      spawnToolhost({
        entry: CLI_ENTRY,
        agentId,
        workspaceDir: workspace.workspaceDir,
        env: { ...process.env, TELEGRAM_BOT_TOKEN: "123:telegram-secret-from-parent", LOG_LEVEL: "warn" },
        passVariables: NON_SECRET_VARIABLES,
      }),
  });
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
