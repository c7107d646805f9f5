/**
 * Share layout and per-agent isolation: start-up refuses a share root inside or around a
 * working tree, and extra folders that reach into agent trees; ALLOWED_DIRS are read-only
 * for every agent and a writableDirs entry is writable for its agent only (real children).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { ToolResult } from "../../src/toolhost/protocol.js";
import { runLaoding } from "../helpers/cli.js";
import { realClient, realWorkspace, type RealWorkspace } from "../helpers/real-toolhost.js";
import { fakeRepo, tempDir } from "../helpers/temp-dir.js";

async function init(env: Record<string, string>, agents?: unknown) {
  const repoRoot = fakeRepo();
  if (agents) writeFileSync(join(repoRoot, "configs", "agents.json"), JSON.stringify(agents));
  const workspaceDir = join(tempDir("laoding-share-"), "rt");
  return { workspaceDir, run: await runLaoding(["init", "--workspace", workspaceDir], { repoRoot, env }) };
}

describe("start-up refuses a share layout that breaks isolation", () => {
  it("SHARE_DIR inside an agent's working tree, naming both paths", async () => {
    const { workspaceDir, run } = await init({ SHARE_DIR: "workspace/main/share" });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      `SHARE_DIR ${join(workspaceDir, "workspace/main/share")} lies inside WORK_DIR ${join(workspaceDir, "workspace")}`,
    );
  });

  it("SHARE_DIR containing the working trees", async () => {
    const { workspaceDir, run } = await init({ SHARE_DIR: "share", WORK_DIR: "share/work" });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      `SHARE_DIR ${join(workspaceDir, "share")} contains WORK_DIR ${join(workspaceDir, "share/work")}`,
    );
  });

  it("an ALLOWED_DIRS entry or an agent's writableDirs that overlaps the share or a working tree", async () => {
    const allowed = await init({ ALLOWED_DIRS: "share/agent-experience" });
    expect(allowed.run.code).toBe(1);
    expect(allowed.run.stderr).toContain(
      `ALLOWED_DIRS entry ${join(allowed.workspaceDir, "share/agent-experience")} overlaps SHARE_DIR ${join(allowed.workspaceDir, "share")}`,
    );
    const writable = await init(
      {},
      {
        agents: [
          { id: "main", name: "M" },
          { id: "other", name: "O", writableDirs: ["workspace/main"] },
        ],
      },
    );
    expect(writable.run.code).toBe(1);
    expect(writable.run.stderr).toContain(
      `agent other's writableDirs entry ${join(writable.workspaceDir, "workspace/main")} overlaps WORK_DIR`,
    );
  });

  it("the default layout passes", async () => {
    expect((await init({})).run.code).toBe(0);
  });
});

describe("extra folders through the real child", () => {
  let workspace: RealWorkspace;
  let common: string;
  let aOnly: string;
  beforeAll(async () => {
    const outside = tempDir("laoding-extra-", "file");
    common = join(outside, "common");
    aOnly = join(outside, "a-only");
    mkdirSync(common);
    mkdirSync(aOnly);
    writeFileSync(join(common, "handbook.md"), "read me\n");
    workspace = await realWorkspace({ TOOLHOST_SANDBOX: "none", ALLOWED_DIRS: common });
    writeFileSync(
      workspace.layout.agentsFile,
      JSON.stringify({
        agents: [
          { id: "a", name: "A", writableDirs: [aOnly] },
          { id: "b", name: "B" },
        ],
      }),
    );
    // As root, the operator hands the folder to agent a's uid.
    const uid = workspace.launches().agents.get("a")?.uid;
    if (uid !== undefined) (await import("node:fs")).chownSync(aOnly, uid, uid);
  });

  const code = (result: ToolResult) => (result.ok ? "ok" : result.error.code);

  it("ALLOWED_DIRS are read-only for every agent", async () => {
    for (const agent of ["a", "b"]) {
      const { client } = realClient(workspace, agent);
      expect(await client.callTool({ name: "file.read", args: { path: join(common, "handbook.md") } })).toMatchObject({
        ok: true,
        output: "read me\n",
      });
      expect(
        code(await client.callTool({ name: "file.write", args: { path: join(common, "graffiti.md"), content: "x" } })),
      ).toBe("PATH_NOT_ALLOWED");
    }
  });

  it("a writableDirs entry is writable for its agent and invisible to the others", async () => {
    const a = realClient(workspace, "a").client;
    expect(code(await a.callTool({ name: "file.write", args: { path: join(aOnly, "out.md"), content: "a's" } }))).toBe(
      "ok",
    );
    const b = realClient(workspace, "b").client;
    expect(code(await b.callTool({ name: "file.read", args: { path: join(aOnly, "out.md") } }))).toBe(
      "PATH_NOT_ALLOWED",
    );
  });
});
