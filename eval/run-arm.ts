/**
 * One arm on one seed: a fresh workspace and SQLite file, the real orchestrator, store
 * and distillation loop, the scripted agent and distiller behind the model interface,
 * and the seed's task stream with its scripted user. Returns what the harness measures.
 * `addOnly` is the full loop with a distiller that only ever proposes ADD;
 * `markdownCitation` the full loop with an agent that writes its citations the way real
 * models do (bold, brackets, backticks, parentheses, trailing, zh).
 */
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { createDistillationLoop } from "../src/agent/distillation/distillation-loop.js";
import { effectReport } from "../src/agent/distillation/effect-report.js";
import { contentHash } from "../src/agent/distillation/lesson-rules.js";
import { lessonsSection } from "../src/agent/distillation/lessons-section.js";
import { createOrchestrator } from "../src/agent/orchestrator.js";
import { parseAgents } from "../src/config/agents.js";
import { loadConfig } from "../src/config/load-config.js";
import { createRuntimeLayout } from "../src/config/runtime-layout.js";
import { SkillCatalog } from "../src/knowledge/skill-catalog.js";
import type { Experience } from "../src/store/experiences-store.js";
import { openStore, type Store } from "../src/store/store.js";
import type { ToolhostClient } from "../src/toolhost/client/toolhost-client.js";
import {
  citationLeaked,
  harmfulRecord,
  helpfulRecord,
  isHelpfulLesson,
  storedCitationLeaks,
  type HarmfulRecord,
  type HelpfulRecord,
} from "./measures.js";
import { createScriptedAgent, successProbability } from "./scripted-agent.js";
import { CLEAN, isHarmfulLesson, NOISY, REALISTIC, scriptedDistiller } from "./scripted-distiller.js";
import {
  correctionText,
  failedTraps,
  FAMILIES,
  lessonFor,
  succeeded,
  taskStream,
  uniform,
  WORLD,
  type Task,
} from "./world.js";

export const ARMS = ["none", "full", "noGates", "placebo", "oracle", "addOnly", "markdownCitation"] as const;
export type Arm = (typeof ARMS)[number];
/** The arms whose distiller learns from the tasks. */
export const LEARNING_ARMS: readonly Arm[] = ["full", "noGates", "addOnly", "markdownCitation"];

export type ArmResult = {
  arm: Arm;
  seed: number;
  successes: boolean[];
  repeatFailures: number;
  revealedTrapTasks: number;
  harmful: HarmfulRecord[];
  helpful: HelpfulRecord[];
  /** Eligible tasks (lessons were chosen): arm, outcome, and the closed-form effect of showing them. */
  eligible: { arm: "treatment" | "holdout"; success: boolean; trueEffect: number }[];
  /** The product's effect report on this run (full arm): treatment and holdout counts. */
  report: { treatment: { n: number; successes: number }; holdout: { n: number; successes: number } } | undefined;
  lessons: { created: number; active: number; deprecated: number };
  /** Answers the agent wrote with a citation in them. */
  citationsWritten: number;
  /** Answers the user saw with citation text in them, and stored assistant messages with it. */
  citationLeaks: number;
  databaseDigest: string;
};

const [AGENT] = parseAgents(JSON.stringify({ agents: [{ id: "main", name: "Laoding" }] }), "the eval harness") as [
  ReturnType<typeof parseAgents>[number],
];
const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
/** The world's tasks need no tools: the agent's toolhost offers none. */
const NO_TOOLS = { listTools: () => Promise.resolve([]) } as unknown as ToolhostClient;

export async function runArm(
  arm: Arm,
  seed: number,
  options: { tasks?: number; keepDatabase?: (file: string) => void } = {},
): Promise<ArmResult> {
  const root = mkdtempSync(join(tmpdir(), "laoding-eval-"));
  try {
    return await run(arm, seed, root, options.tasks ?? WORLD.tasks, options.keepDatabase);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

async function run(
  arm: Arm,
  seed: number,
  root: string,
  taskCount: number,
  keepDatabase?: (file: string) => void,
): Promise<ArmResult> {
  let now = Date.UTC(2026, 0, 1);
  const clock = { now: () => now };
  const loaded = loadConfig({
    env: { REACT_MAX_STEPS: "4", LOG_LEVEL: "silent" },
    repoRoot: root,
    cwd: root,
    workspaceDir: root,
  });
  const layout = createRuntimeLayout(root, loaded.config);
  const databaseFile = join(root, "eval.db");
  const store = await openStore(databaseFile, clock);
  const logger = pino({ level: "silent" });
  const tasks = taskStream(seed, taskCount);
  const byText = new Map(tasks.map((task) => [task.text, task]));
  const learning = LEARNING_ARMS.includes(arm);
  const faults = arm === "noGates" ? NOISY : learning ? REALISTIC : CLEAN;
  const model = createScriptedAgent({
    seed,
    taskByText: (text) => byText.get(text),
    distiller: scriptedDistiller(seed, faults, { addOnly: arm === "addOnly" }),
    citationStyle: arm === "markdownCitation" ? "markdown" : "line",
  });
  const remembering = learning || arm === "oracle";
  const loop = remembering
    ? createDistillationLoop({
        store,
        model: learning ? model : undefined,
        settings: {
          locale: "en",
          holdoutPercent: arm === "oracle" ? 0 : 10,
          settleQuietMs: 10 * MINUTE,
          ...(arm === "noGates" ? { dangerouslySkipGates: true } : {}),
        },
        logger,
        clock,
      })
    : undefined;
  if (arm === "oracle") await seedOracle(store);
  const catalog = new SkillCatalog([{ dir: layout.baseSkillsDir, source: "base" }], logger);
  let traceCounter = 0;
  const orchestrator = createOrchestrator({
    store,
    agents: [AGENT],
    catalog: () => catalog,
    toolhost: () => NO_TOOLS,
    model,
    layout,
    settings: { maxSteps: 4, contextBudgetChars: 4_000, locale: "en" },
    logger,
    newTraceId: () => `tr-${seed}-${arm}-${(traceCounter += 1)}`,
    ...(loop ? { lessons: loop.lessons, afterTurn: (turn) => loop.afterTurn(turn) } : {}),
    ...(arm === "placebo" ? { extraSections: () => [placeboSection()] } : {}),
  });

  const successes: boolean[] = [];
  const revealed = new Set<string>();
  let repeatFailures = 0;
  let revealedTrapTasks = 0;
  let citationLeaks = 0;
  let nextCurate = now + DAY;
  const eligible: ArmResult["eligible"] = [];
  const send = (task: Task, text: string, index: number) =>
    orchestrator.handle({
      channel: "eval",
      chatId: `task-${task.index}`,
      userId: "user",
      messageId: `${task.index}-${index}`,
      text,
      agentId: AGENT.id,
      isOperator: false,
    });

  for (const task of tasks) {
    now += 30 * MINUTE;
    const answer = (await send(task, task.text, 0)) ?? "";
    if (citationLeaked(answer, model.written.get(task.index)?.body)) {
      citationLeaks += 1;
      if (process.env.EVAL_DEBUG) process.stderr.write(`leak: ${JSON.stringify(answer)}\n`);
    }
    const success = succeeded(task, answer);
    successes.push(success);
    const failed = failedTraps(task, answer);
    const knownTraps = task.family.traps.filter((trap) => revealed.has(`${task.family.slug}:${trap.topic}`));
    if (knownTraps.length > 0) {
      revealedTrapTasks += 1;
      if (failed.some((trap) => revealed.has(`${task.family.slug}:${trap.topic}`))) repeatFailures += 1;
    }
    const traceId = `tr-${seed}-${arm}-${traceCounter}`;
    const chosen = await store.injections.byTrace(traceId);
    if (chosen.length > 0 && arm === "full") {
      const lessons: { id: number; text: string }[] = [];
      for (const row of chosen) {
        const lesson = await store.experiences.get(row.experienceId);
        if (lesson) lessons.push({ id: lesson.id, text: lesson.summary });
      }
      eligible.push({
        arm: chosen[0]?.arm ?? "treatment",
        success,
        trueEffect: successProbability(task, lessons) - successProbability(task, []),
      });
    }
    // The user says when an answer did not work; sometimes they also say what would have.
    // A wrong flag in the answer is what a user notices first.
    const firstFailed = failed.find((trap) => answer.includes(trap.wrong)) ?? failed[0];
    if (!success) {
      const reveals = firstFailed !== undefined && uniform(seed, task.index, 7) < WORLD.reveal;
      if (reveals) revealed.add(`${task.family.slug}:${firstFailed.topic}`);
      now += MINUTE;
      await send(
        task,
        reveals ? correctionText(task, firstFailed) : `No, that did not work for ${task.family.name}.`,
        1,
      );
    }
    await loop?.flush();
    await loop?.idle();
    if (loop && now >= nextCurate) {
      await loop.curate(AGENT.id);
      nextCurate += DAY;
    }
  }
  await orchestrator.idle();
  const lessons = await store.experiences.list(AGENT.id);
  const harmful: HarmfulRecord[] = [];
  const helpful: HelpfulRecord[] = [];
  for (const lesson of lessons) {
    if (isHarmfulLesson(lesson.summary)) harmful.push(await harmfulRecord(store, lesson));
    else if (lesson.source !== "manual" && isHelpfulLesson(lesson.summary))
      helpful.push(await helpfulRecord(store, lesson));
  }
  const result: ArmResult = {
    arm,
    seed,
    successes,
    repeatFailures,
    revealedTrapTasks,
    harmful,
    helpful,
    eligible,
    report: arm === "full" ? await reportCounts(store) : undefined,
    lessons: {
      created: lessons.filter((lesson) => lesson.source !== "manual").length,
      active: lessons.filter((lesson) => lesson.status === "active").length,
      deprecated: lessons.filter((lesson) => lesson.status === "deprecated").length,
    },
    citationsWritten: [...model.written.values()].filter((written) => written.reply !== written.body).length,
    citationLeaks: citationLeaks + (await storedCitationLeaks(store)),
    databaseDigest: await databaseDigest(store),
  };
  keepDatabase?.(databaseFile);
  await store.close();
  return result;
}

async function reportCounts(store: Store): Promise<NonNullable<ArmResult["report"]>> {
  const { treatment, holdout } = (await effectReport(store, AGENT.id)).overall;
  return {
    treatment: { n: treatment.n, successes: treatment.successes },
    holdout: { n: holdout.n, successes: holdout.successes },
  };
}

/** Oracle memory: the true remedy of every trap, as pinned manual lessons. */
async function seedOracle(store: Store): Promise<void> {
  for (const familyOf of FAMILIES) {
    for (const trap of familyOf.traps) {
      const summary = lessonFor(familyOf, trap);
      await store.experiences.add({
        agentId: AGENT.id,
        source: "manual",
        summary,
        category: "pitfall",
        confidence: 1,
        status: "active",
        createdBy: "oracle",
        contentHash: contentHash(summary),
        tags: familyOf.slug.split("-"),
      });
    }
  }
}

/** Three irrelevant lessons of a real lesson's length, shown the same way. */
function placeboSection() {
  const texts = [
    "For team lunches, the booking window needs --early-order; without it the step fails.",
    "For office plants, the watering rota needs --twice-weekly; without it the step fails.",
    "For desk moves, the cable labels need --colour-coded; without it the step fails.....",
  ];
  const fake = texts.map((summary, index) => ({ id: 900_001 + index, summary }) as Experience);
  return lessonsSection(fake, "en");
}

/** A hash of every table's rows in id order: two runs of one seed must agree. */
export async function databaseDigest(store: Store): Promise<string> {
  const hash = createHash("sha256");
  // The eval's store is its own SQLite file (sqlite_master, rowid).
  const tables = (
    await store.sql.all<{ name: string }>(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
    )
  ).map((row) => row.name);
  for (const table of tables) {
    hash.update(`${table}\n`);
    for (const row of await store.sql.all(`SELECT * FROM "${table}" ORDER BY rowid`))
      hash.update(`${JSON.stringify(row)}\n`);
  }
  return hash.digest("hex");
}
