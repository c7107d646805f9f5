/**
 * Issue 8, item 4 and 6, through the real toolhost child: one request cannot take the
 * agent down for its other users. Answers are capped by their encoded size under the
 * frame limit (names of control characters grow six-fold in JSON), regular expressions
 * run in linear time while another session is served, and bad arguments are INVALID_ARGS.
 * Item 5: the allowlist's bypasses are refused by the real child too.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { ToolResult } from "../../src/toolhost/protocol.js";
import { giveToAgent, realClient, realWorkspace, type RealWorkspace } from "../helpers/real-toolhost.js";

const FRAME_BYTES = 1024 * 1024;
/** Bytes of a result on the wire (JSON.stringify is what the protocol writer uses). */
const wireBytes = (result: ToolResult) => Buffer.byteLength(JSON.stringify(result));
/** A file name of 250 control characters (every byte but NUL and `/` is a valid name byte). */
const controlName = (seed: number) =>
  Array.from({ length: 250 }, (_, index) => String.fromCharCode(1 + ((seed + index) % 31))).join("");

let workspace: RealWorkspace;
let chat: string;
beforeAll(async () => {
  // The output cap is set far above the frame limit: the frame limit must win.
  workspace = await realWorkspace({
    TOOLHOST_SANDBOX: "none",
    ALLOWED_COMMANDS: "yes,ls,cat,awk,sed,git,find",
    TOOL_OUTPUT_MAX_BYTES: String(8 * 1024 * 1024),
    TOOLHOST_MAX_FRAME_BYTES: String(FRAME_BYTES),
    SHELL_TIMEOUT_MS: "5000",
  });
  chat = join(workspace.layout.agentTrees("a").workTree, "chat");
  for (const folder of ["one", "two"]) {
    mkdirSync(join(chat, "amplified", folder), { recursive: true });
    for (let index = 0; index < 700; index += 1) {
      writeFileSync(
        join(chat, "amplified", folder, `${controlName(index)}${index}`),
        `${controlName(index + 7).slice(0, 290)}\n`,
      );
    }
  }
  writeFileSync(join(chat, "redos.txt"), `${"a".repeat(48)}b\n`);
  giveToAgent(workspace, "a", chat);
}, 60_000);

describe("bounded answers (real child)", () => {
  it("file.glob, file.list and file.grep over names of control characters answer truncated, under the frame limit, and the child stays up", async () => {
    const { client, supervisor, spawns } = realClient(workspace, "a", {
      maxFrameBytes: FRAME_BYTES,
      callTimeoutMs: 30_000,
    });
    const call = (name: string, args: Record<string, unknown>) => client.callTool({ name, args, cwd: chat });
    const pid = (await client.ping()).pid;
    const started = supervisor.pid;
    const calls: [string, Record<string, unknown>][] = [
      ["file.glob", { pattern: "**" }],
      ["file.list", { path: "amplified", depth: 2 }],
      ["file.grep", { pattern: ".", path: "amplified", max_results: 1_000 }],
    ];
    for (const [name, args] of calls) {
      const result = await call(name, args);
      expect(result, name).toMatchObject({ ok: true, truncated: true });
      expect(wireBytes(result), name).toBeLessThan(FRAME_BYTES - 4 * 1024);
      if (result.ok) expect(result.output, name).toMatch(/…\[(\d+ bytes truncated|stopped[^\]]*)\]/);
    }
    // The same child: its own pid (inside its jail's namespace) and the one the supervisor started.
    expect((await client.ping()).pid).toBe(pid);
    expect(supervisor.pid).toBe(started);
    expect(spawns).toHaveLength(1);
  }, 120_000);

  it("shell.exec output of control characters is capped by its encoded size", async () => {
    const { client, spawns } = realClient(workspace, "a", { maxFrameBytes: FRAME_BYTES, callTimeoutMs: 30_000 });
    const result = await client.callTool({
      name: "shell.exec",
      args: { command: "yes $'\\x01\\x02\\x03'" },
      cwd: chat,
    });
    expect(result).toMatchObject({ ok: true, truncated: true });
    expect(wireBytes(result)).toBeLessThan(FRAME_BYTES - 4 * 1024);
    expect(spawns).toHaveLength(1);
  }, 60_000);
});

describe("linear-time patterns (real child)", () => {
  it("^(a+)+$ over 48 a's and a b answers, and another session's call is answered meanwhile", async () => {
    const { client, spawns } = realClient(workspace, "a", { concurrency: 2, callTimeoutMs: 20_000 });
    const other = join(workspace.layout.agentTrees("a").workTree, "other-chat");
    const grep = client.callTool({ name: "file.grep", args: { pattern: "^(a+)+$", path: "redos.txt" }, cwd: chat });
    const glob = client.callTool({ name: "file.glob", args: { pattern: "*a*a*a*a*a*a*a*a*a*a*a*a*c" }, cwd: chat });
    const meanwhile = client.callTool({ name: "shell.exec", args: { command: "echo served" }, cwd: other });
    expect(await meanwhile).toEqual({ ok: true, output: "served\n", truncated: false });
    expect(await grep).toEqual({ ok: true, output: "no matches", truncated: false });
    expect(await glob).toMatchObject({ ok: true });
    expect(spawns).toHaveLength(1);
  }, 60_000);
});

describe("bad arguments are INVALID_ARGS, naming the problem (real child)", () => {
  it.each([
    ["file.glob", { pattern: "{a,b" }, /pattern \{a,b: a \{ is never closed/],
    ["file.glob", { pattern: "[z-a]" }, /pattern \[z-a\] is not a valid regular expression/],
    ["file.grep", { pattern: "(?=x)y" }, /pattern is not a valid regular expression \(RE2 syntax.*\(\?=/],
    ["file.grep", { pattern: "(a)\\1" }, /pattern is not a valid regular expression/],
    ["file.grep", { pattern: "x", glob: "{x" }, /glob \{x: a \{ is never closed/],
    ["file.read", { path: `${"n".repeat(300)}/x.txt` }, /too long/],
    ["file.write", { path: `${"n".repeat(300)}.txt`, content: "x" }, /too long/],
    ["file.list", { path: "n".repeat(300) }, /too long/],
  ])(
    "%s %j",
    async (name, args, reason) => {
      const { client } = realClient(workspace, "a");
      const result = await client.callTool({ name, args, cwd: chat });
      expect(result).toMatchObject({
        ok: false,
        error: { code: "INVALID_ARGS", reason: expect.stringMatching(reason) },
      });
    },
    30_000,
  );

  it("a huge path argument does not make a huge error reason", async () => {
    const { client } = realClient(workspace, "a");
    const result = await client.callTool({
      name: "file.read",
      args: { path: `\u0001${"\u0002".repeat(100_000)}` },
      cwd: chat,
    });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(Buffer.byteLength(JSON.stringify(result.error.reason))).toBeLessThanOrEqual(2 * 1024 + 2);
  }, 30_000);
});

describe("allowlist bypasses (real child)", () => {
  it.each([
    ["true #\nid -u", /id is not on ALLOWED_COMMANDS/],
    ["printf -v PATH /tmp", /printf -v assigns/],
    ["printf -v 'BASH_CMDS[ls]' /tmp/x", /printf -v assigns/],
    ["test -v 'a[$(id -u >&2)]'", /test -v evaluates/],
    ["awk 'BEGIN { system(\"id\") }'", /system\(\) runs a command/],
    ["sed '1e id' redos.txt", /the e command runs/],
    ["git -c alias.x='!id' x", /git -c can run/],
    ["find . -exec id ;", /find -exec runs/],
    // Nothing is added behind the operator's back.
    ["curl --version", /curl is not on ALLOWED_COMMANDS/],
    ["node --version", /node is not on ALLOWED_COMMANDS/],
  ])(
    "%j is refused",
    async (command, reason) => {
      const { client } = realClient(workspace, "a");
      const result = await client.callTool({ name: "shell.exec", args: { command }, cwd: chat });
      expect(result).toMatchObject({
        ok: false,
        error: { code: "COMMAND_NOT_ALLOWED", reason: expect.stringMatching(reason) },
      });
    },
    30_000,
  );

  it("the allowed forms of the same programs still run", async () => {
    const { client } = realClient(workspace, "a");
    const result = await client.callTool({
      name: "shell.exec",
      args: { command: "awk '/a|b/ { n++ } END { print n }' redos.txt && sed -n 's/a*/x/p' redos.txt" },
      cwd: chat,
    });
    expect(result).toEqual({ ok: true, output: "1\nxb\n", truncated: false });
  }, 30_000);
});
