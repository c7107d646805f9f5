/**
 * The per-agent library switch through a running bot: `laoding library disable|enable`
 * (another process's write to the same database) takes effect at the agent's next
 * message, without a restart: tools, signpost, link and sandbox binding follow.
 */
import { existsSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { routeTo, type FakeOpenAI } from "../fakes/openai-server.js";
import { startTestBot } from "../helpers/bot.js";
import { runLaoding } from "../helpers/cli.js";

function lastTurn(fake: FakeOpenAI, before: number) {
  const requests = fake.requests.slice(before);
  const react = requests.filter((request) => !request.messages[0]?.content?.startsWith("You route"));
  return {
    system: react[0]?.messages[0]?.content ?? "",
    tools: react[0]?.tools?.map((tool) => tool.function.name) ?? [],
    toolResults: react.flatMap((request) =>
      request.messages.filter((message) => message.role === "tool").map((message) => message.content),
    ),
  };
}

describe("experience library switch at run time", () => {
  it("disable then enable: the next message has no library, then has it again", async () => {
    const bot = await startTestBot();
    const chat = join(bot.layout.workRoot, "main", "test-chat-1");
    const library = bot.layout.agentTrees("main").experienceDir;

    let mark = bot.fake.requests.length;
    bot.fake.enqueue(
      routeTo([], "look"),
      { toolCalls: [{ name: "file_list", arguments: { path: "." } }] },
      { text: "done" },
    );
    await bot.send("look around");
    let turn = lastTurn(bot.fake, mark);
    expect(turn.tools).toContain("library_search");
    expect(turn.system).toContain("## Team experience library");
    expect(readlinkSync(join(chat, "团队经验"))).toBe(library);

    const disabled = await runLaoding(["library", "disable", "main", "--workspace", bot.workspaceDir], {
      repoRoot: bot.repoRoot,
    });
    expect(disabled).toMatchObject({
      code: 0,
      stdout: expect.stringContaining("agent main: experience library disabled (override; agents.json says enabled)"),
    });

    mark = bot.fake.requests.length;
    bot.fake.enqueue(
      routeTo([], "look"),
      { toolCalls: [{ name: "file_read", arguments: { path: join(library, "INDEX.md") } }] },
      { text: "done" },
    );
    await bot.send("look again");
    turn = lastTurn(bot.fake, mark);
    expect(turn.tools).not.toContain("library_search");
    expect(turn.tools).not.toContain("library_index");
    expect(turn.system).not.toContain("Team experience library");
    expect(existsSync(join(chat, "团队经验"))).toBe(false);
    expect(turn.toolResults[0]).toMatch(/^ERROR_CODE=PATH_NOT_ALLOWED; TOOL=file\.read;/);
    const context = await bot.send("/context");
    expect(context).not.toContain("library-signpost");

    expect(
      (await runLaoding(["library", "enable", "main", "--workspace", bot.workspaceDir], { repoRoot: bot.repoRoot }))
        .code,
    ).toBe(0);
    mark = bot.fake.requests.length;
    bot.fake.enqueue(
      routeTo([], "look"),
      { toolCalls: [{ name: "library_search", arguments: { query: "死锁" } }] },
      { text: "done" },
    );
    await bot.send("search");
    turn = lastTurn(bot.fake, mark);
    expect(turn.tools).toContain("library_search");
    expect(turn.system).toContain("## Team experience library");
    expect(turn.toolResults[0]).toMatch(/^no document matches "死锁" \(0 documents in /);
    expect(readlinkSync(join(chat, "团队经验"))).toBe(library);
    expect(await bot.send("/context")).toContain("library-signpost");
  }, 60_000);
});
