import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runLaoding } from "../helpers/cli.js";
import { fakeRepo, tempDir } from "../helpers/temp-dir.js";

describe("laoding logs", () => {
  it("prints rotated files oldest first as readable lines, filtered by trace id and level", async () => {
    const repoRoot = fakeRepo();
    const workspaceDir = join(tempDir(), "rt");
    expect((await runLaoding(["init", "--workspace", workspaceDir], { repoRoot })).code).toBe(0);
    const empty = await runLaoding(["logs", "--workspace", workspaceDir], { repoRoot });
    expect(empty).toMatchObject({ code: 0, stdout: "" });
    expect(empty.stderr).toMatch(
      /^No logs yet in .*data\/logs\. They are written there unless LOG_LEVEL is set in the environment/,
    );

    const dir = join(workspaceDir, "data/logs");
    mkdirSync(dir, { recursive: true });
    const line = (fields: Record<string, unknown>) =>
      `${JSON.stringify({ time: Date.UTC(2026, 11, 1, 9, 30, 0), pid: 7, ...fields })}\n`;
    writeFileSync(join(dir, "laoding.log.1"), line({ level: 30, msg: "older", traceId: "tr-a" }));
    writeFileSync(
      join(dir, "laoding.log"),
      line({ level: 30, msg: "message received", traceId: "tr-b", agentId: "main", chars: 5 }) +
        line({ level: 50, msg: "model call failed", traceId: "tr-b", kind: "auth" }) +
        "not json\n",
    );

    const all = await runLaoding(["logs", "--workspace", workspaceDir], { repoRoot });
    expect(all.stdout.split("\n")).toEqual([
      "09:30:00.000 INFO  [tr-a] older",
      "09:30:00.000 INFO  [tr-b main] message received chars=5",
      "09:30:00.000 ERROR [tr-b] model call failed kind=auth",
      "not json",
      "",
    ]);
    const trace = await runLaoding(["logs", "--trace", "tr-b", "--level", "error", "--workspace", workspaceDir], {
      repoRoot,
    });
    expect(trace.stdout).toBe("09:30:00.000 ERROR [tr-b] model call failed kind=auth\n");
    const bad = await runLaoding(["logs", "--level", "loud", "--workspace", workspaceDir], { repoRoot });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--level must be one of trace, debug, info, warn, error, fatal, not "loud"/);
  });
});

describe("workspace paths are checked before anything is created", () => {
  it("refuses /proc at once, a file in the way, and tells the --workspace to init", async () => {
    const repoRoot = fakeRepo();
    const proc = await runLaoding(["init", "--workspace", "/proc/nope"], { repoRoot });
    expect(proc.code).toBe(1);
    expect(proc.stderr).toMatch(/the workspace \/proc\/nope is inside \/proc, a virtual file system/);
    const base = tempDir();
    writeFileSync(join(base, "file"), "x");
    const blocked = await runLaoding(["chat", "--workspace", join(base, "file", "rt")], { repoRoot });
    expect(blocked.stderr).toMatch(/cannot be created: .*\/file is a file, not a folder/);
    const missing = join(base, "missing");
    for (const command of [["gaps"], ["skills", "list"], ["logs"]]) {
      const run = await runLaoding([...command, "--workspace", missing], { repoRoot });
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(`laoding init --workspace ${missing}`);
    }
  });
});
