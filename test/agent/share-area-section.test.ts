/**
 * The "private-folder" prompt section: it always names the agent's own folder and, for 30
 * days after `laoding share apply` (the record the real CLI writes), where that agent's
 * old shared paths went; never another agent's. Then a real turn shows it in the system
 * prompt and in /context.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import {
  agentAreaSection,
  MAX_MOVE_LINES,
  SHARE_MOVES_SHOWN_MS,
  shareAreaSection,
} from "../../src/agent/prompt/share-area-section.js";
import { readAgentsFile } from "../../src/config/agents.js";
import { shareMovesFile, type ShareMove } from "../../src/share/share-moves.js";
import { routeTo } from "../fakes/openai-server.js";
import { startTestBot } from "../helpers/bot.js";
import { runLaoding } from "../helpers/cli.js";
import { realWorkspace, type RealWorkspace } from "../helpers/real-toolhost.js";
import { tempDir, writeFile } from "../helpers/temp-dir.js";

const DAY_MS = 24 * 60 * 60 * 1000;

describe("the private-folder prompt section after a share apply", () => {
  let workspace: RealWorkspace;
  let movedAtMs: number;
  const share = () => workspace.layout.shareDir;
  const privateOf = (agent: string) => workspace.layout.agentTrees(agent).privateDir;
  const section = (agentId: string, nowMs: number) =>
    agentAreaSection({ layout: workspace.layout, agentId, nowMs }).content;

  beforeAll(async () => {
    workspace = await realWorkspace({ TOOLHOST_SANDBOX: "none", BOT_LOCALE: "en" });
    writeFile(join(share(), "scripts", "deploy.sh"), "echo deploy\n");
    writeFile(join(share(), "notes.txt"), "notes\n");
    writeFile(join(share(), "b-only", "tool.sh"), "echo b\n");
    workspace.launches();
    const mapping = writeFile(
      join(tempDir("laoding-map-", "file"), "mapping.json"),
      JSON.stringify({
        version: 1,
        items: [
          { path: "scripts", agents: ["a", "b"] },
          { path: "notes.txt", agents: ["a"], to: "docs/notes.txt" },
          { path: "b-only", agents: ["b"] },
        ],
      }),
    );
    const applied = await runLaoding(["share", "apply", "--mapping", mapping, "--workspace", workspace.workspaceDir], {
      repoRoot: workspace.repoRoot,
    });
    if (applied.code !== 0) throw new Error(applied.stderr);
    const record = JSON.parse(readFileSync(shareMovesFile(workspace.layout.dataDir), "utf8")) as { moves: ShareMove[] };
    movedAtMs = Date.parse(record.moves[0]?.movedAt ?? "");
  }, 90_000);

  it("names the agent's private folder and its own moves, never another agent's", () => {
    const text = section("a", movedAtMs + DAY_MS);
    expect(text).toContain(`Your own files live in ${privateOf("a")}/`);
    expect(text).toContain(`- ${join(share(), "scripts")} -> ${join(privateOf("a"), "scripts")}`);
    expect(text).toContain(`- ${join(share(), "notes.txt")} -> ${join(privateOf("a"), "docs", "notes.txt")}`);
    expect(text).not.toContain("b-only");
    expect(text).not.toContain(privateOf("b"));
    const forB = section("b", movedAtMs + DAY_MS);
    expect(forB).toContain(`- ${join(share(), "b-only")} -> ${join(privateOf("b"), "b-only")}`);
    expect(forB).not.toContain("notes.txt");
    expect(forB).not.toContain(privateOf("a"));
  });

  it("a second apply does not restart the 30 days", async () => {
    const before = readFileSync(shareMovesFile(workspace.layout.dataDir), "utf8");
    const mapping = writeFile(
      join(tempDir("laoding-map2-"), "mapping.json"),
      JSON.stringify({ version: 1, items: [{ path: "scripts", agents: ["a", "b"] }] }),
    );
    const again = await runLaoding(["share", "apply", "--mapping", mapping, "--workspace", workspace.workspaceDir], {
      repoRoot: workspace.repoRoot,
    });
    expect(again.stdout).toContain("moves recorded for the agents' prompts (shown for 30 days): 0 new");
    expect(readFileSync(shareMovesFile(workspace.layout.dataDir), "utf8")).toBe(before);
  }, 60_000);

  it("drops the moves 30 days after the apply, keeping the private folder", () => {
    expect(section("a", movedAtMs + SHARE_MOVES_SHOWN_MS - 1)).toContain("copied into it");
    const later = section("a", movedAtMs + SHARE_MOVES_SHOWN_MS);
    expect(later).toBe(
      `## Your private folder\nYour own files live in ${privateOf("a")}/ (no other agent can see it). Keep scripts and notes you reuse there.`,
    );
  });

  it(`lists at most ${MAX_MOVE_LINES} moves, then says how many more`, () => {
    const moves: ShareMove[] = Array.from({ length: MAX_MOVE_LINES + 3 }, (_, index) => ({
      agentId: "a",
      from: `/s/item-${index}`,
      to: `/s/agents/a/item-${index}`,
      movedAt: new Date(0).toISOString(),
      backup: "x",
    }));
    const text = shareAreaSection({ privateDir: "/s/agents/a", agentId: "a", moves, nowMs: DAY_MS }).content;
    expect(text.match(/^- \/s\/item-/gm)).toHaveLength(MAX_MOVE_LINES);
    expect(text).toContain("- and 3 more (all under /s/agents/a/)");
  });
});

describe("the private-folder section in a real turn", () => {
  it("is in the system prompt with the agent's recent moves, and /context lists it", async () => {
    const bot = await startTestBot();
    const agentId = readAgentsFile(bot.layout.agentsFile)[0]?.id as string;
    const privateDir = bot.layout.agentTrees(agentId).privateDir;
    const move: ShareMove = {
      agentId,
      from: join(bot.layout.shareDir, "scripts"),
      to: join(privateDir, "scripts"),
      movedAt: new Date().toISOString(),
      backup: "b",
    };
    const other: ShareMove = {
      ...move,
      agentId: "someone-else",
      from: join(bot.layout.shareDir, "theirs"),
      to: "/elsewhere",
    };
    writeFileSync(shareMovesFile(bot.layout.dataDir), JSON.stringify({ version: 1, moves: [move, other] }));
    bot.fake.enqueue(routeTo([], "chat"), { text: "ok" });
    await bot.send("hello");
    const system = bot.fake.requests[1]?.messages[0]?.content ?? "";
    const expected = shareAreaSection({
      privateDir,
      agentId,
      moves: [move, other],
      nowMs: Date.parse(move.movedAt),
    }).content;
    expect(system).toContain(expected);
    expect(system).toContain(`- ${move.from} -> ${move.to}`);
    expect(system).not.toContain("theirs");
    expect(await bot.send("/context")).toContain(`- private-folder: ${expected.length}`);
  }, 60_000);
});
