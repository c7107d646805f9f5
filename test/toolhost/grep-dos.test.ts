/**
 * Issue 32, item 2, through the real toolhost child: one regular expression over one long
 * line held the child for minutes (`[a-z]{1,1000}[0-9]` over a 3.9 MB single-line file:
 * ~190 s), so it missed its heartbeats, was killed, and took other users' calls with it.
 * Now the work of one test is bounded: the pattern is refused naming the limit, and the
 * largest pattern accepted runs over the same file, and over a file of 64 KiB lines,
 * while another session's read and the heartbeats are answered by the same child.
 */
import { writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { giveToAgent, realClient, realWorkspace, type RealWorkspace } from "../helpers/real-toolhost.js";

/** Letters only: `[a-z]{1,n}` keeps every one of its threads alive on every character. */
const letters = (length: number) => "abcdefghijklmnopqrstuvwxyz".repeat(Math.ceil(length / 26)).slice(0, length);

let workspace: RealWorkspace;
let chat: string;
let other: string;
beforeAll(async () => {
  workspace = await realWorkspace({ TOOLHOST_SANDBOX: "none" });
  chat = join(workspace.layout.agentTrees("a").workTree, "dos-chat");
  other = join(workspace.layout.agentTrees("a").workTree, "other-chat");
  mkdirSync(join(chat, "dos"), { recursive: true });
  mkdirSync(other, { recursive: true });
  // The attack's file: 3.9 MB on one line, a digit only at its very end.
  writeFileSync(join(chat, "dos", "one-line.txt"), `${letters(3_900_000)}7\n`);
  // Under the 4 MiB grep cap: 59 lines of 64 KiB, one with a digit near its start.
  const lines = Array.from({ length: 59 }, (_, index) =>
    index === 29 ? `abc1${letters(64 * 1024 - 4)}` : letters(64 * 1024),
  );
  writeFileSync(join(chat, "dos", "long-lines.txt"), `${lines.join("\n")}\n`);
  writeFileSync(join(other, "note.txt"), "the other session's note\n");
  giveToAgent(workspace, "a", chat, other);
}, 60_000);

describe("one regular expression cannot hold the child (real child)", () => {
  it("[a-z]{1,1000}[0-9] over a 3.9 MB line is refused, naming the repetition limit", async () => {
    const { client, spawns } = realClient(workspace, "a", { callTimeoutMs: 20_000 });
    const result = await client.callTool({
      name: "file.grep",
      args: { pattern: "[a-z]{1,1000}[0-9]", path: "dos/one-line.txt" },
      cwd: chat,
    });
    expect(result).toMatchObject({
      ok: false,
      error: {
        code: "INVALID_ARGS",
        reason: expect.stringMatching(/pattern repeats \{1,1000\}: a repetition count may be at most 100/),
      },
    });
    expect(spawns).toHaveLength(1);
  }, 60_000);

  it("the largest accepted pattern runs over the long lines while another session reads and heartbeats are answered; the child is never replaced", async () => {
    // Two missed heartbeats of 2 s kill a child: a test holding the thread for 4 s would.
    const { client, spawns } = realClient(workspace, "a", {
      concurrency: 4,
      callTimeoutMs: 60_000,
      heartbeatMs: 2_000,
    });
    const pid = (await client.ping()).pid;
    let settled = false;
    // 100 repetitions, 202 instructions: at the limits.
    const grep = client
      .callTool({ name: "file.grep", args: { pattern: "[a-z]{1,100}[0-9]", path: "dos" }, cwd: chat, sessionId: 1 })
      .finally(() => (settled = true));
    const read = client.callTool({ name: "file.read", args: { path: "note.txt" }, cwd: other, sessionId: 2 });
    let pingsMeanwhile = 0;
    while (!settled) {
      const answer = await client.ping(10_000);
      expect(answer.pid).toBe(pid);
      if (!settled) pingsMeanwhile += 1;
    }
    const grepped = await grep;
    expect(grepped, JSON.stringify(grepped).slice(0, 300)).toMatchObject({ ok: true });
    if (grepped.ok) {
      expect(grepped.output).toMatch(/^long-lines\.txt:30: abc1/);
      // What was not searched is said, not silently dropped.
      expect(grepped.output).toMatch(/60 lines longer than \d+ characters were searched in their first \d+ only/);
    }
    expect(await read).toMatchObject({ ok: true, output: expect.stringContaining("the other session's note") });
    expect(pingsMeanwhile).toBeGreaterThan(0);
    expect((await client.ping()).pid).toBe(pid);
    expect(spawns).toHaveLength(1);
  }, 120_000);
});
