/**
 * Small talk is not a capability gap (issue 27): the real `laoding chat` over the console
 * channel, piped as a script would, with the fake model answering greetings and routing
 * them to no skill. Over three sessions (/new between them) nothing is recorded as a gap,
 * no skill is drafted, and /capability_gaps says so.
 */
import { existsSync, readdirSync } from "node:fs";
import { PassThrough } from "node:stream";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/run-cli.js";
import { isRoutingRequest, routeTo } from "../fakes/openai-server.js";
import { startTestBot } from "../helpers/bot.js";

/** `laoding chat` in-process, its stdin the lines a person would pipe in. */
async function chat(workspaceDir: string, repoRoot: string, lines: string[]) {
  const stdout = new PassThrough();
  const out: Buffer[] = [];
  stdout.on("data", (chunk: Buffer) => out.push(chunk));
  const stdin = new PassThrough();
  stdin.end(`${lines.join("\n")}\n`);
  const code = await runCli({
    args: ["chat", "--workspace", workspaceDir],
    env: { LOG_LEVEL: "silent" },
    cwd: repoRoot,
    repoRoot,
    stdout,
    stderr: new PassThrough(),
    stdin,
  });
  return { code, stdout: Buffer.concat(out).toString("utf8") };
}

describe("small talk on the console", () => {
  it("greetings over three sessions, routed to no skill, record no gap and draft nothing", async () => {
    const bot = await startTestBot({ env: { GAP_DRAFT_TRIGGER_COUNT: "2" } });
    // The console runs its own bot over this workspace.
    await bot.runtime.close();
    bot.fake.respond((request) => {
      if (isRoutingRequest(request)) return routeTo([], "");
      const last = request.messages.at(-1)?.content ?? "";
      return { text: /thanks/i.test(last) ? "You're welcome!" : "Hello! What can I do for you?" };
    });
    const run = await chat(bot.workspaceDir, bot.repoRoot, [
      "hi",
      "hello there",
      "/new",
      "hi",
      "slow",
      "/new",
      "hello there",
      "thanks",
      "/capability_gaps",
    ]);
    expect(run.code).toBe(0);
    expect(run.stdout.match(/Hello! What can I do for you\?/g)).toHaveLength(5);
    expect(run.stdout).toContain("You're welcome!");
    expect(run.stdout).toMatch(/No capability gaps in the last 72 h\./);
    // Every greeting reached the model: routed to no skill, answered, and offered report_gap.
    const routed = bot.fake.requests.filter((request) => isRoutingRequest(request));
    expect(routed).toHaveLength(6);
    expect(
      bot.fake.requests
        .filter((request) => !isRoutingRequest(request) && request.tools)
        .every((request) => request.tools?.some((tool) => tool.function.name === "report_gap")),
    ).toBe(true);

    const db = new Database(bot.layout.databaseFile, { readonly: true });
    try {
      expect(db.prepare("SELECT count(*) AS n FROM capability_gaps").get()).toEqual({ n: 0 });
      expect(db.prepare("SELECT count(*) AS n FROM skill_drafts").get()).toEqual({ n: 0 });
      expect(db.prepare("SELECT count(DISTINCT session_id) AS n FROM messages WHERE kind = 'chat'").get()).toEqual({
        n: 3,
      });
    } finally {
      db.close();
    }
    const skillsDir = bot.layout.agentTrees("main").skillsDir;
    expect(existsSync(skillsDir) ? readdirSync(skillsDir).filter((name) => name.startsWith("auto-")) : []).toEqual([]);
  });
});
