/**
 * The loop closes in a real run: failures across sessions (here the model saying with
 * report_gap that it cannot) become a draft, the draft is live on the next message
 * without a restart, and operators see and reload it all from chat and from the CLI.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { watchSkillFolders } from "../../src/knowledge/skill-watcher.js";
import { isRoutingRequest, routeTo } from "../fakes/openai-server.js";
import { skillText, startTestBot } from "../helpers/bot.js";
import { runLaoding } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp-dir.js";
import { waitFor } from "../helpers/toolhost.js";

describe("the capability-gap loop end to end", () => {
  it("reported gaps across sessions draft a skill, reload, and route the next request to the draft", async () => {
    const bot = await startTestBot({ env: { GAP_DRAFT_TRIGGER_COUNT: "3" } });
    bot.fake.respond((request) => {
      const system = request.messages[0]?.content ?? "";
      if (isRoutingRequest(request))
        return system.includes("auto-deploy-docker")
          ? routeTo(["auto-deploy-docker"], "deploy-docker")
          : routeTo([], "deploy-docker");
      if (system.startsWith("You write a skill file")) return { text: "Sorry, I cannot write files." };
      if (system.includes("### auto-deploy-docker")) return { text: "Following the draft skill: here are the steps." };
      // Without a skill the model cannot do it, and says so with report_gap before answering.
      if (request.messages.at(-1)?.role === "tool") return { text: "I can't do that yet." };
      const asked = request.messages.at(-1)?.content ?? "";
      return { toolCalls: [{ name: "report_gap", arguments: { asked, missing: "a way to run docker" } }] };
    });
    expect(await bot.send("deploy our app with docker", { chatId: "A" })).toBe("I can't do that yet.");
    await bot.send("how do I deploy with docker?", { chatId: "A" });
    const skillsDir = bot.layout.agentTrees("main").skillsDir;
    expect(existsSync(join(skillsDir, "auto-deploy-docker"))).toBe(false);
    await bot.send("docker deploy please", { chatId: "B" });

    const draft = readFileSync(join(skillsDir, "auto-deploy-docker", "SKILL.md"), "utf8");
    expect(draft).toMatch(/^---\nname: auto-deploy-docker\n/);
    expect(draft).toContain("status: draft\norigin: gap\nintent_key: deploy-docker");
    expect(draft).toContain("- deploy our app with docker");
    expect(bot.runtime.catalogs.get("main")?.snapshot.get("auto-deploy-docker")?.status).toBe("draft");

    const requestsBefore = bot.fake.requests.length;
    expect(await bot.send("deploy the docker stack", { chatId: "C" })).toBe(
      "Following the draft skill: here are the steps.",
    );
    const [routing, react] = bot.fake.requests.slice(requestsBefore);
    expect(routing?.messages[0]?.content).toContain("- auto-deploy-docker [draft]: ");
    expect(react?.messages[0]?.content).toContain("### auto-deploy-docker (draft: verify its steps as you go)");
    expect(await bot.runtime.store.sql.get("SELECT count(*) AS n FROM capability_gaps")).toEqual({ n: 3 });

    const gaps = await bot.send("/capability_gaps");
    expect(gaps).toMatch(
      /^Capability gaps \(last 72 h, top 1\):\n1\. deploy-docker · the model said it cannot · capability · 3× · 2 sessions · last 0 min ago · draft auto-deploy-docker$/,
    );
    expect(await bot.send("/capability_gaps", { isOperator: false, userId: "guest" })).toBe(
      "/capability_gaps is for operators only. Your id is test:guest; an operator can admit you with: `laoding operators add test:guest --agent main`",
    );

    const cli = await runLaoding(["gaps", "--workspace", bot.workspaceDir], { repoRoot: bot.repoRoot });
    expect(cli.code).toBe(0);
    expect(cli.stdout).toContain("1. deploy-docker · the model said it cannot · capability · 3× · 2 sessions");
    expect(cli.stdout).toMatch(
      / {5}1 user · first seen 0 min ago · e\.g\. "docker deploy please"; "how do I deploy with docker\?"; "deploy our app with docker"/,
    );
    const firstGap = (
      await bot.runtime.store.sql.get<{ id: number }>("SELECT id FROM capability_gaps ORDER BY id LIMIT 1")
    )?.id as number;
    const show = await runLaoding(["gaps", "show", String(firstGap), "--workspace", bot.workspaceDir], {
      repoRoot: bot.repoRoot,
    });
    expect(show.code).toBe(0);
    expect(show.stdout).toMatch(/^gap \d+ · deploy-docker · the model said it cannot · capability · agent main/);
    expect(show.stdout).toMatch(
      /trace tr-[0-9a-f]+ · session \d+\nmessages:\n.* user\/chat: deploy our app with docker\n.* assistant\/scratch: +calls report_gap\(\{"asked":"deploy our app with docker","missing":"a way to run docker"\}\)\n.* tool\/scratch: Recorded: .*\n.* assistant\/chat: I can't do that yet\.\n/,
    );
    // report_gap is answered by the bot itself: never a toolhost call, so no audit row.
    expect(show.stdout).toMatch(
      /\ntool calls:\n {2}\(none\)\ngaps of this trace:\n {2}\* \d+ the model said it cannot · capability: missing: a way to run docker; asked: deploy our app with docker \(no skill matched\)\n/,
    );
    const json = JSON.parse(
      (await runLaoding(["gaps", "--json", "--workspace", bot.workspaceDir], { repoRoot: bot.repoRoot })).stdout,
    );
    expect(json[0].drafts[0]).toMatchObject({ intentKey: "deploy-docker", status: "drafted" });
    expect(json[0].clusters[0]).toMatchObject({
      intentKey: "deploy-docker",
      count: 3,
      sessions: 2,
      users: 1,
      samples: expect.arrayContaining(["deploy our app with docker"]),
      draft: { skillName: "auto-deploy-docker" },
    });
    expect(
      (await runLaoding(["gaps", "show", "999", "--workspace", bot.workspaceDir], { repoRoot: bot.repoRoot })).code,
    ).toBe(1);
  });

  it("/reload_skills reports added, changed, removed and invalid skills", async () => {
    // No watcher here: the command itself must do the reload and report it.
    const bot = await startTestBot({
      watchSkills: false,
      skills: { "old-skill": skillText("old-skill", "to be removed"), "kept-skill": skillText("kept-skill", "kept") },
    });
    const base = bot.layout.baseSkillsDir;
    const { rmSync } = await import("node:fs");
    rmSync(join(base, "old-skill"), { recursive: true });
    writeFileSync(join(base, "kept-skill", "SKILL.md"), skillText("kept-skill", "kept, now better"));
    mkdirSync(join(base, "new-skill"));
    writeFileSync(join(base, "new-skill", "SKILL.md"), skillText("new-skill", "brand new"));
    mkdirSync(join(base, "Broken"));
    writeFileSync(join(base, "Broken", "SKILL.md"), "---\nname: Broken\ndescription: x\n---\n");
    const reply = await bot.send("/reload_skills");
    expect(reply).toMatch(
      /^Skills reloaded \(version \d+, 3 skills\)\.\nadded: new-skill\nchanged: kept-skill\nremoved: old-skill\ninvalid: skills\/Broken\/SKILL\.md: name must be lowercase/,
    );
    expect(await bot.send("/reload_skills")).toMatch(/^Skills reloaded \(version \d+, 3 skills\)\.\ninvalid: /);
  });

  it("the watcher reloads the running bot's catalog after a change on disk, without a command", async () => {
    const bot = await startTestBot();
    const catalog = bot.runtime.catalogs.get("main");
    const skillsDir = bot.layout.agentTrees("main").skillsDir;
    mkdirSync(join(skillsDir, "hand-written"), { recursive: true });
    writeFileSync(join(skillsDir, "hand-written", "SKILL.md"), skillText("hand-written", "Written by an operator"));
    await waitFor(() => catalog?.snapshot.get("hand-written") !== undefined, 5_000, "the watcher to reload");
    const cli = await runLaoding(["skills", "reload", "--workspace", bot.workspaceDir], { repoRoot: bot.repoRoot });
    expect(cli.stdout).toMatch(/asked the running bot \(pid \d+\) to reload[\s\S]*hand-written +active/);
    const version = catalog?.snapshot.version ?? 0;
    await waitFor(() => (catalog?.snapshot.version ?? 0) > version, 5_000, "the marker to trigger a reload");
    // Once the bot has stopped, the command says so instead of claiming it asked one.
    await bot.runtime.close();
    const alone = await runLaoding(["skills", "reload", "--workspace", bot.workspaceDir], { repoRoot: bot.repoRoot });
    expect(alone.stdout).toMatch(/^no bot is running in this workspace: nothing to reload/);
  });
});

describe("watcher debounce", () => {
  it("many writes in a burst cause one reload", async () => {
    const dir = tempDir();
    let reloads = 0;
    const watcher = watchSkillFolders([dir], () => (reloads += 1), { debounceMs: 150 });
    try {
      for (let index = 0; index < 30; index += 1) {
        mkdirSync(join(dir, `s${index}`), { recursive: true });
        writeFileSync(join(dir, `s${index}`, "SKILL.md"), `---\nname: s${index}\ndescription: x\n---\n`);
      }
      await waitFor(() => reloads > 0, 3_000, "a reload");
      await new Promise((resolve) => setTimeout(resolve, 400));
      expect(reloads).toBe(1);
      writeFileSync(join(dir, "s1", "SKILL.md"), "changed");
      await waitFor(() => reloads === 2, 3_000, "a second reload");
    } finally {
      watcher.close();
    }
  });
});
