/**
 * The race that a path check cannot win (issue 8, finding 1): agent A's own shell swaps a
 * folder of its working tree with a link (renameat2 RENAME_EXCHANGE, in a loop) while its
 * file tools write, edit, list and grep inside that folder. One link points into agent
 * B's skills, the other at a root-only folder outside the workspace. Whatever the race
 * does, nothing outside A's trees may be written, listed, searched or read: the toolhost child
 * holds only A's authority. Both sandbox modes run at once, for RACE_SECONDS each.
 */
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { hashTree, realClient, realWorkspace, giveToAgent, type RealWorkspace } from "../helpers/real-toolhost.js";
import { tempDir } from "../helpers/temp-dir.js";
import { SWAPPER } from "../helpers/swapper.js";

const RACE_SECONDS = 10;
const isRoot = process.getuid?.() === 0;

async function race(mode: "bwrap" | "none"): Promise<void> {
  const workspace: RealWorkspace = await realWorkspace({
    TOOLHOST_SANDBOX: mode,
    ALLOWED_COMMANDS: "python3,ln,mkdir",
    SHELL_MAX_TIMEOUT_MS: "60000",
  });
  const { layout } = workspace;
  const bSkills = layout.agentTrees("b").skillsDir;
  mkdirSync(join(bSkills, "existing"), { recursive: true });
  writeFileSync(
    join(bSkills, "existing", "SKILL.md"),
    "---\nname: existing\ndescription: B's own skill\n---\nB-SECRET-SKILL\n",
  );
  const canary = tempDir("laoding-canary-");
  chmodSync(canary, 0o700);
  writeFileSync(join(canary, "root-only.txt"), "ROOT-ONLY-CANARY\n");
  const protectedTrees = () => [bSkills, layout.agentTrees("b").workTree, canary].map(hashTree).join(",");

  const chat = join(layout.agentTrees("a").workTree, "race");
  mkdirSync(join(chat, "d1"), { recursive: true });
  mkdirSync(join(chat, "d2"), { recursive: true });
  writeFileSync(join(chat, "d1", "edit.txt"), "one two\n");
  writeFileSync(join(chat, "d2", "edit.txt"), "one two\n");
  writeFileSync(join(chat, "swap.py"), SWAPPER);
  const { client } = realClient(workspace, "a", { concurrency: 8, queueMax: 64, callTimeoutMs: 30_000 });
  giveToAgent(workspace, "a", chat);
  const before = protectedTrees();
  const call = (name: string, args: Record<string, unknown>) => client.callTool({ name, args, cwd: chat });
  // The links are made by A's own shell, as an attacker would.
  const linked = await call("shell.exec", { command: `ln -s ${bSkills} l1 && ln -s ${canary} l2` });
  expect(linked, JSON.stringify(linked)).toMatchObject({ ok: true });

  const swapper = call("shell.exec", {
    command: `python3 swap.py ${RACE_SECONDS}`,
    timeout_ms: (RACE_SECONDS + 20) * 1000,
  });
  const outputs: string[] = [];
  let calls = 0;
  let writes = 0;
  const deadline = Date.now() + RACE_SECONDS * 1000;
  const hammer = async (work: (round: number) => Promise<{ ok: boolean; output?: string }>) => {
    for (let round = 0; Date.now() < deadline; round += 1) {
      const result = await work(round);
      calls += 1;
      if (result.output) outputs.push(result.output);
    }
  };
  const write = (dir: string) => async (round: number) => {
    const result = await call("file.write", { path: `${dir}/n${round % 7}/w.txt`, content: `A wrote ${round}\n` });
    if (result.ok) writes += 1;
    return result;
  };
  await Promise.all([
    hammer(write("d1")),
    hammer(write("d2")),
    hammer((round) =>
      call("file.edit", { path: `d${1 + (round % 2)}/edit.txt`, old_string: "one", new_string: "one" }),
    ),
    hammer((round) => call("file.list", { path: `d${1 + (round % 2)}` })),
    hammer((round) => call("file.grep", { pattern: "SECRET|CANARY|name:", path: `d${1 + (round % 2)}` })),
    // While d1 is the link into B's skills, d1/existing/SKILL.md is B's; while d2 is the link, d2/root-only.txt is root's.
    hammer((round) => call("file.read", { path: round % 2 === 0 ? "d1/existing/SKILL.md" : "d2/root-only.txt" })),
  ]);
  const swapped = await swapper;
  expect(swapped, `${mode}: the swapper ran`).toMatchObject({ ok: true, output: expect.stringMatching(/^swaps \d+/) });
  const swaps = swapped.ok ? Number(/swaps (\d+)/.exec(swapped.output)?.[1]) : 0;
  // The race really ran: thousands of swaps while the tools worked.
  expect(swaps, mode).toBeGreaterThan(1_000);
  expect(calls, mode).toBeGreaterThan(100);
  expect(writes, mode).toBeGreaterThan(10);
  expect(protectedTrees(), `${mode}: B's trees and the root-only folder are unchanged`).toBe(before);
  for (const output of outputs) {
    expect(output, mode).not.toMatch(/B-SECRET-SKILL|ROOT-ONLY-CANARY|root-only\.txt|existing/);
  }
  await client.supervisor.stop();
}

describe("the folder-swap race (issue 8, finding 1)", () => {
  // As root the boundary is the agent's uid; without root, none mode is the documented trust mode.
  it.runIf(isRoot)(
    `file.write, file.edit, file.list, file.grep and file.read never reach outside A's trees while A's shell swaps folders for ${RACE_SECONDS} s`,
    async () => {
      await Promise.all([race("bwrap"), race("none")]);
    },
    (RACE_SECONDS + 60) * 1000,
  );
});
