/**
 * `laoding operators add|remove|list` (issue 24 item 4): the lists are edited in place,
 * every other line and comment of configs/env kept; a per-agent bot's list lives in
 * agents.json; a malformed id is refused before anything is written.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runLaoding } from "../helpers/cli.js";
import { REAL_REPO_ROOT, tempDir } from "../helpers/temp-dir.js";

async function workspace(): Promise<string> {
  const dir = join(tempDir(), "ws");
  expect((await runLaoding(["init", "--workspace", dir], { repoRoot: REAL_REPO_ROOT })).code).toBe(0);
  return dir;
}

const operators = (args: string[], dir: string, env: NodeJS.ProcessEnv = {}) =>
  runLaoding(["operators", ...args, "--workspace", dir], { repoRoot: REAL_REPO_ROOT, env });

describe("laoding operators", () => {
  it("adds, lists and removes OPERATOR_IDS, keeping the env file's other lines and comments", async () => {
    const dir = await workspace();
    const envFile = join(dir, "configs", "env");
    writeFileSync(envFile, "# my notes\nBOT_LOCALE=en   # english\n\n# OPERATOR_IDS=old\nREACT_MAX_STEPS=8\n");
    const added = await operators(["add", "telegram:123456"], dir);
    expect(added).toMatchObject({ code: 0, stderr: "" });
    expect(added.stdout).toBe(`added telegram:123456 to OPERATOR_IDS in ${envFile}; restart the bot to apply it\n`);
    expect((await operators(["add", "feishu:ou_abc123"], dir)).code).toBe(0);
    expect(readFileSync(envFile, "utf8")).toBe(
      "# my notes\nBOT_LOCALE=en   # english\n\n# OPERATOR_IDS=old\nREACT_MAX_STEPS=8\nOPERATOR_IDS=telegram:123456,feishu:ou_abc123\n",
    );
    const listed = await operators(["list"], dir, { TELEGRAM_BOT_TOKEN: "42:TOKEN" });
    expect(listed.stdout).toBe(
      `OPERATOR_IDS (${envFile}): telegram:123456, feishu:ou_abc123\ntelegram:main (TELEGRAM_BOT_TOKEN): telegram:123456\n`,
    );
    expect((await operators(["remove", "telegram:123456"], dir)).code).toBe(0);
    expect(readFileSync(envFile, "utf8")).toBe(
      "# my notes\nBOT_LOCALE=en   # english\n\n# OPERATOR_IDS=old\nREACT_MAX_STEPS=8\nOPERATOR_IDS=feishu:ou_abc123\n",
    );
    const again = await operators(["remove", "telegram:123456"], dir);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("telegram:123456 is not in OPERATOR_IDS");
  });

  it("refuses a malformed id, naming what an id looks like, and writes nothing", async () => {
    const dir = await workspace();
    const envFile = join(dir, "configs", "env");
    const before = readFileSync(envFile, "utf8");
    for (const [id, words] of [
      ["telegram:abc", "is not a Telegram numeric user id"],
      ["123456", "is not channel:user-id"],
      ["feishu:123", "is not a Feishu open_id"],
      ["slack:1", "is not a chat channel"],
    ] as const) {
      const run = await operators(["add", id], dir);
      expect(run.code).toBe(2);
      expect(run.stderr).toContain(words);
    }
    expect(readFileSync(envFile, "utf8")).toBe(before);
  });

  it("--agent edits the operators of that agent's own bot in agents.json", async () => {
    const dir = await workspace();
    const agentsFile = join(dir, "configs", "agents.json");
    writeFileSync(
      agentsFile,
      JSON.stringify(
        {
          agents: [
            { id: "main", name: "Main" },
            { id: "ops", name: "Ops", telegram: { tokenEnv: "TG_TOKEN_OPS", allowedUsers: ["*"] } },
          ],
        },
        null,
        2,
      ),
    );
    expect((await operators(["add", "telegram:777", "--agent", "ops"], dir)).stdout).toContain(
      `to the operators of agent ops's telegram bot in ${agentsFile}`,
    );
    const written = JSON.parse(readFileSync(agentsFile, "utf8")) as {
      agents: { telegram?: { operators?: string[]; allowedUsers?: string[] } }[];
    };
    expect(written.agents[1]?.telegram).toEqual({ tokenEnv: "TG_TOKEN_OPS", allowedUsers: ["*"], operators: ["777"] });
    const listed = await operators(["list"], dir, { TG_TOKEN_OPS: "43:OPS" });
    expect(listed.stdout).toContain("telegram:ops (agents.json ops.telegram): telegram:777\n");
    expect((await operators(["remove", "telegram:777", "--agent", "ops"], dir)).code).toBe(0);
    expect((JSON.parse(readFileSync(agentsFile, "utf8")) as typeof written).agents[1]?.telegram?.operators).toEqual([]);
  });
});
