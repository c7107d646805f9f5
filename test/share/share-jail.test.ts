/**
 * `share verify`'s shell probes (share-jail-probe.ts) with each agent's real toolhost child
 * started as the bot starts it, as root. TOOLHOST_SANDBOX=none-unsafe keeps agents apart by
 * their uids only, so what a test plants on the trees decides what a shell can reach: the
 * path sandbox is no help there (a shell command's arguments are not paths to it).
 */
import { chmodSync, chownSync, existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { jailProblems } from "../../src/share/share-jail-probe.js";
import type { ToolhostClient } from "../../src/toolhost/client/toolhost-client.js";
import { realClient, realWorkspace, type RealWorkspace } from "../helpers/real-toolhost.js";
import { writeFile } from "../helpers/temp-dir.js";

let workspace: RealWorkspace;
const trees = (agent: string) => workspace.layout.agentTrees(agent);
const bNotes = () => join(trees("b").privateDir, "secret-notes.txt");
const agents = [
  { id: "a", name: "A" },
  { id: "b", name: "B" },
] as Parameters<typeof jailProblems>[0]["agents"];

beforeAll(async () => {
  workspace = await realWorkspace({ TOOLHOST_SANDBOX: "none-unsafe", TOOLHOST_UID_BASE: "52000", BOT_LOCALE: "en" });
  // As at the bot's start: each tree given to its agent's uid, mode 0700.
  workspace.launches();
  writeFile(bNotes(), "b's notes\n");
}, 60_000);

const restores: (() => void)[] = [];
afterEach(() => {
  for (const restore of restores.splice(0).reverse()) restore();
});

/** Changes a folder's mode or owner for one test. */
function plant(path: string, change: { mode?: number; uid?: number }): void {
  const before = statSync(path);
  if (change.mode !== undefined) chmodSync(path, change.mode);
  if (change.uid !== undefined) chownSync(path, change.uid, change.uid);
  restores.push(() => {
    chmodSync(path, before.mode & 0o7777);
    chownSync(path, before.uid, before.gid);
  });
}

async function probe(): Promise<{ problems: string[]; lines: string[] }> {
  const clients = new Map<string, ToolhostClient>(
    agents.map((agent) => [agent.id, realClient(workspace, agent.id, { callTimeoutMs: 20_000 }).client]),
  );
  const lines: string[] = [];
  const problems = await jailProblems({
    layout: workspace.layout,
    agents,
    client: (id) => clients.get(id) as ToolhostClient,
    knownFiles: (id) => (id === "b" ? [bNotes()] : []),
    stamp: "T1",
    report: (line) => lines.push(line),
  });
  return { problems, lines };
}

describe("share verify's shell probes through each agent's jail", () => {
  it("pass when each agent's shell writes its own folder and reaches no other tree, and leave no probe file", async () => {
    const { problems, lines } = await probe();
    expect(problems).toEqual([]);
    expect(lines).toContain("agent a: its shell writes its own folder and reaches no other agent's tree");
    expect(lines).toContain("agent b: its shell writes its own folder and reaches no other agent's tree");
    expect(readdirSync(trees("a").privateDir).filter((name) => name.startsWith(".verify-"))).toEqual([]);
  }, 90_000);

  it("fail, saying what to do, when another agent's tree is open to every uid (the path sandbox would not stop a shell `cat`)", async () => {
    plant(trees("b").privateDir, { mode: 0o755 });
    plant(bNotes(), { mode: 0o644 });
    const { problems } = await probe();
    expect(problems).toContain(
      `agent a's shell can reach agent b's tree (\`ls '${trees("b").privateDir}'\` succeeded): the OS sandbox does not keep agents apart: set TOOLHOST_SANDBOX=bwrap (or auto with bubblewrap installed) and let \`laoding start\` give each tree to its agent's uid with mode 0700 (docs/isolation.md)`,
    );
    // A file apply copied into B's folder, read by A's shell.
    expect(
      problems.some((problem) =>
        problem.startsWith(`agent a's shell can reach agent b's tree (\`cat '${bNotes()}'\` succeeded)`),
      ),
    ).toBe(true);
    // Only the opened tree is reported.
    expect(problems.filter((problem) => problem.startsWith("agent b's shell"))).toEqual([]);
    expect(existsSync(join(trees("b").privateDir, ".verify-T1"))).toBe(false);
  }, 90_000);

  it("fail, saying what to do, when an agent's own folder is not writable by its uid", async () => {
    plant(trees("a").privateDir, { uid: 52999 });
    const { problems } = await probe();
    const own = problems.find((problem) =>
      problem.startsWith(
        `agent a cannot write its own folder ${trees("a").privateDir} from its shell (touch: EXIT_NONZERO`,
      ),
    );
    expect(own, problems.join("\n")).toBeDefined();
    expect(own).toContain(
      `give the folder back to the agent's uid (\`laoding start\` does it, or chown -R <agent uid> ${trees("a").privateDir})`,
    );
    expect(problems.filter((problem) => problem.includes("agent b cannot write"))).toEqual([]);
  }, 90_000);
});
