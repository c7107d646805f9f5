/**
 * `laoding library` against a real workspace: the switch is stored in agent_settings,
 * and list / index / rebuild run through the agent's real toolhost child.
 */
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { beforeAll, describe, expect, it } from "vitest";
import { runLaoding } from "../helpers/cli.js";
import { fakeRepo, tempDir } from "../helpers/temp-dir.js";

let repoRoot: string;
let workspaceDir: string;
const library = () => join(workspaceDir, "share", "agent-experience", "main");

beforeAll(async () => {
  repoRoot = fakeRepo({ scope: "file" });
  workspaceDir = join(tempDir("laoding-libcli-", "file"), "rt");
  expect((await runLaoding(["init", "--workspace", workspaceDir], { repoRoot })).code).toBe(0);
  appendFileSync(join(workspaceDir, "configs", "env"), "\nTOOLHOST_SANDBOX=none\nBOT_LOCALE=en\n");
  for (let day = 1; day <= 45; day += 1) {
    const date = `2026-09-${String((day % 30) + 1).padStart(2, "0")}`;
    writeFileSync(
      join(library(), `${date}-note-${day}.md`),
      `---\ntitle: Note ${day}\nkeywords: k${day}\nlast_verified: ${date}\n---\nbody\n`,
    );
  }
});

const run = (...args: string[]) => runLaoding(["library", ...args, "--workspace", workspaceDir], { repoRoot });

describe("laoding library", () => {
  it("index prints the whole INDEX.md, paged through the toolhost", async () => {
    const result = await run("index", "main");
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(readFileSync(join(library(), "INDEX.md"), "utf8"));
    expect(result.stdout.split("\n")).toHaveLength(48);
    expect(result.stdout).toMatch(
      /^# Team experience index .*\n<!-- count: 45 -->\n- 2026-09-30-note-29\.md \| Note 29 \| k29 \| - \| verified 2026-09-30\n/,
    );
  }, 60_000);

  it("list shows file, title and verification; rebuild reports the count", async () => {
    const list = await run("list", "main");
    expect(list.code).toBe(0);
    expect(list.stdout).toContain("2026-09-30-note-29.md  Note 29  (verified 2026-09-30)\n");
    expect(list.stdout).toMatch(/45 document\(s\) in .*share\/agent-experience\/main\n$/);
    const rebuild = await run("rebuild", "main");
    expect(rebuild).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(/INDEX\.md regenerated \(rebuild\): 45 documents\n$/),
    });
  }, 60_000);

  it("enable / disable / reset store the override; wrong arguments are usage errors", async () => {
    expect((await run("disable", "main")).stdout).toContain("experience library disabled");
    const db = new Database(join(workspaceDir, "data", "laoding.db"), { readonly: true });
    expect(db.prepare("SELECT agent_id, experience_library_enabled FROM agent_settings").all()).toEqual([
      { agent_id: "main", experience_library_enabled: 0 },
    ]);
    expect((await run("reset", "main")).stdout).toContain("experience library enabled (as agents.json says)");
    expect(db.prepare("SELECT experience_library_enabled AS value FROM agent_settings").get()).toEqual({ value: null });
    db.close();
    expect(await run("disable", "nobody")).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('no agent "nobody"; known: main'),
    });
    expect(await run("explode", "main")).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('unknown action "explode"'),
    });
    expect(await run("index")).toMatchObject({ code: 2, stderr: expect.stringContaining("name exactly one agent") });
  });
});
