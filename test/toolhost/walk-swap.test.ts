/**
 * Issue 32, item 8: file.list and file.glob resolved their folder, then walked it by path
 * strings, so agent A's own shell swapping the folder for a link (renameat2
 * RENAME_EXCHANGE, in a loop) between the check and the walk made them list /etc. The
 * walks now hold each folder by descriptor: whatever the race does, every name they
 * answer is one of A's own, and the child's descriptors do not pile up.
 */
import { readdirSync, readFileSync, chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { EXPERIENCE_LINK_NAME } from "../../src/config/runtime-layout.js";
import type { ToolResult } from "../../src/toolhost/protocol.js";
import { giveToAgent, realClient, realWorkspace } from "../helpers/real-toolhost.js";
import { tempDir } from "../helpers/temp-dir.js";
import { SWAPPER } from "../helpers/swapper.js";

const RACE_SECONDS = 6;
const isRoot = process.getuid?.() === 0;

/** Every name A's own folder holds (the session's link to its library too); anything else in an answer came from outside it. */
const OWN_NAMES = new Set(["d1", "d2", "l1", "l2", "swap.py", "mine-1.txt", "sub", "mine-2.txt", EXPERIENCE_LINK_NAME]);

/** The names (path segments) an answer of file.list, file.glob or file.grep shows. */
function namesShown(tool: string, output: string): string[] {
  return output
    .split("\n")
    .filter(
      (line) =>
        line !== "" &&
        !line.startsWith("…[") &&
        !line.startsWith("no matches") &&
        line !== "no files match" &&
        !line.endsWith(" is empty"),
    )
    .flatMap((line) => {
      // list: "<type> <name>  <size or -> target>"; grep: "<path>:<line>: <text>"; glob: "<path>".
      const path =
        tool === "file.list"
          ? (line.slice(5).split("  ")[0] as string).replace(/\/$/, "")
          : tool === "file.grep"
            ? (line.split(":")[0] as string)
            : line;
      return path.split("/");
    });
}

/** The toolhost child's own pid (the node process under whatever starts it), as the host sees it. */
function childNodePid(startedPid: number): number {
  const parents = new Map<number, number>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      parents.set(Number(name), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // Gone meanwhile.
    }
  }
  const descends = (pid: number): boolean =>
    pid === startedPid || (pid > 1 && parents.has(pid) && descends(parents.get(pid) as number));
  const found = [...parents.keys()].find(
    (pid) => descends(pid) && /child-entry/.test(readFileSync(`/proc/${pid}/cmdline`, "utf8")),
  );
  if (found === undefined) throw new Error("no toolhost child process found");
  return found;
}

async function race(mode: "bwrap" | "none"): Promise<void> {
  const workspace = await realWorkspace({
    TOOLHOST_SANDBOX: mode,
    ALLOWED_COMMANDS: "python3,ln",
    SHELL_MAX_TIMEOUT_MS: "60000",
  });
  // A host folder the agent's uid may read: the leak is what its uid can see.
  const host = tempDir("laoding-host-");
  chmodSync(host, 0o755);
  writeFileSync(join(host, "HOST-CANARY.txt"), "host\n");
  const chat = join(workspace.layout.agentTrees("a").workTree, "walk-race");
  for (const dir of ["d1", "d2"]) {
    mkdirSync(join(chat, dir, "sub"), { recursive: true });
    writeFileSync(join(chat, dir, "mine-1.txt"), "mine one\n");
    writeFileSync(join(chat, dir, "sub", "mine-2.txt"), "mine two\n");
  }
  writeFileSync(join(chat, "swap.py"), SWAPPER);
  giveToAgent(workspace, "a", chat);
  const { client, supervisor } = realClient(workspace, "a", { concurrency: 8, queueMax: 64, callTimeoutMs: 30_000 });
  const call = (name: string, args: Record<string, unknown>) => client.callTool({ name, args, cwd: chat });
  const linked = await call("shell.exec", { command: `ln -s /etc l1 && ln -s ${host} l2` });
  expect(linked, JSON.stringify(linked)).toMatchObject({ ok: true });

  const walks: [string, (round: number) => Record<string, unknown>][] = [
    ["file.list", (round) => ({ path: `d${1 + (round % 2)}`, depth: 2 })],
    ["file.list", () => ({ path: ".", depth: 3 })],
    ["file.glob", (round) => ({ pattern: "**", path: `d${1 + (round % 2)}` })],
    ["file.glob", () => ({ pattern: "**" })],
    ["file.grep", (round) => ({ pattern: ".", path: `d${1 + (round % 2)}` })],
    // Stops after the first match: the walk is left half done.
    ["file.grep", () => ({ pattern: ".", max_results: 1 })],
  ];
  // One round before the race: the descriptors a warm child holds anyway.
  for (const [name, args] of walks) await call(name, args(0));
  const nodePid = mode === "none" ? childNodePid(supervisor.pid as number) : undefined;
  const descriptors = () => readdirSync(`/proc/${nodePid}/fd`).length;
  const before = nodePid === undefined ? 0 : descriptors();

  const swapper = call("shell.exec", {
    command: `python3 swap.py ${RACE_SECONDS}`,
    timeout_ms: (RACE_SECONDS + 20) * 1000,
  });
  const answers: { name: string; result: ToolResult }[] = [];
  const deadline = Date.now() + RACE_SECONDS * 1000;
  await Promise.all(
    walks.map(async ([name, args]) => {
      for (let round = 0; Date.now() < deadline; round += 1)
        answers.push({ name, result: await call(name, args(round)) });
    }),
  );
  const swapped = await swapper;
  expect(swapped, `${mode}: the swapper ran`).toMatchObject({ ok: true, output: expect.stringMatching(/^swaps \d+/) });
  expect(Number(swapped.ok ? /swaps (\d+)/.exec(swapped.output)?.[1] : 0), mode).toBeGreaterThan(1_000);
  const listed = answers.filter(({ name, result }) => name === "file.list" && result.ok);
  expect(listed.length, `${mode}: lists answered during the race`).toBeGreaterThan(20);
  for (const { name, result } of answers) {
    if (!result.ok) continue;
    const foreign = namesShown(name, result.output).filter((shown) => !OWN_NAMES.has(shown));
    expect(foreign, `${mode}: ${name} answered names from outside A's folder:\n${result.output.slice(0, 500)}`).toEqual(
      [],
    );
  }
  if (nodePid !== undefined) expect(descriptors(), `${mode}: the child's open descriptors`).toBeLessThanOrEqual(before);
  await client.supervisor.stop();
}

describe("a folder swapped for a link while list, glob and grep walk it (issue 32, item 8)", () => {
  // As root the boundary is the agent's uid; without root, none mode is the documented trust mode.
  it.runIf(isRoot)(
    `no name from /etc or another host folder is ever answered while A's shell swaps folders for ${RACE_SECONDS} s`,
    async () => {
      await Promise.all([race("bwrap"), race("none")]);
    },
    (RACE_SECONDS + 60) * 1000,
  );
});
