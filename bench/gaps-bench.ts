/**
 * Recording a gap and evaluating its cluster at 10k, 100k and 1M existing rows: the
 * merge lookup, the insert, and the cluster statistics query over the lookback window.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { createGapLoop } from "../src/agent/gaps/gap-loop.js";
import { signature } from "../src/agent/gaps/intent-merge.js";
import { SkillCatalog } from "../src/knowledge/skill-catalog.js";
import { writeDraftIfMissing } from "../src/knowledge/skill-draft.js";
import type { SqliteDriver } from "../src/store/sql/sqlite-driver.js";
import { openStore } from "../src/store/store.js";
import { formatMs, percentile } from "./stats.js";

const SIZES = [10_000, 100_000, 1_000_000];
const SAMPLES = 2_000;
const AGENTS = 5;
const INTENTS = 2_000;
const REASONS = ["no_skill", "tool_failure", "parse_failure", "step_budget"];
const HOUR = 3_600_000;

type Result = {
  rows: number;
  p50: number;
  p99: number;
  evalP50: number;
  evalP99: number;
  newP50: number;
  knownP50: number;
  seedSeconds: number;
};

async function measure(rows: number): Promise<Result> {
  const dir = mkdtempSync(join(tmpdir(), "laoding-gaps-bench-"));
  const clock = { now: () => Date.UTC(2026, 10, 30, 12) };
  const store = await openStore(join(dir, "laoding.db"), clock);
  const seedStarted = performance.now();
  // The bulk seed goes straight to SQLite's connection: a million rows through the async seam would measure the seam.
  const db = (store.sql as SqliteDriver).database;
  const insert = db.prepare(
    `INSERT INTO capability_gaps (agent_id, session_id, trace_id, intent_key, reason, class, user_text, user_id, created_at) VALUES (?, ?, ?, ?, ?, 'capability', ?, ?, ?)`,
  );
  const remember = db.prepare(
    `INSERT OR IGNORE INTO intent_keys (agent_id, intent_key, signature, last_seen) VALUES (?, ?, ?, ?)`,
  );
  const session = db.prepare(
    `INSERT INTO sessions (id, agent_id, channel, chat_id, created_at, updated_at) VALUES (?, 'bench', 'bench', ?, 0, 0)`,
  );
  db.transaction(() => {
    for (let id = 1; id <= 5_000; id += 1) session.run(id, `chat-${id}`);
    for (let agent = 0; agent < AGENTS; agent += 1) {
      for (let intent = 0; intent < INTENTS; intent += 1)
        remember.run(
          `agent-${agent}`,
          `intent-${intent}-task`,
          signature(`intent-${intent}-task`),
          clock.now() - (intent % 70) * HOUR,
        );
    }
    for (let index = 0; index < rows; index += 1) {
      const intent = `intent-${index % INTENTS}-task`;
      // A third of the rows fall outside the 72 h window.
      const age = (index % 3 === 0 ? 100 : index % 70) * HOUR;
      insert.run(
        `agent-${index % AGENTS}`,
        (index % 5_000) + 1,
        `t${index}`,
        intent,
        REASONS[index % REASONS.length],
        `text ${index}`,
        `u${index % 500}`,
        clock.now() - age,
      );
    }
  })();
  // A bulk seed leaves a huge WAL; fold it into the database as a running bot's would be.
  db.pragma("wal_checkpoint(TRUNCATE)");
  const seedSeconds = (performance.now() - seedStarted) / 1000;
  const skillsDir = join(dir, "skills");
  mkdirSync(skillsDir);
  const loop = createGapLoop({
    store,
    catalog: () => new SkillCatalog([], pino({ level: "silent" })),
    writeDraft: (_agentId, name, text) => Promise.resolve(writeDraftIfMissing(skillsDir, name, text)),
    model: undefined,
    // A trigger no cluster reaches: the benchmark measures recording and evaluation, not drafting.
    settings: { triggerCount: 1_000_000, lookbackHours: 72, locale: "en" },
    logger: pino({ level: "silent" }),
    clock,
  });
  const record: number[] = [];
  const recordNew: number[] = [];
  const recordKnown: number[] = [];
  const evaluate: number[] = [];
  for (let index = 0; index < SAMPLES; index += 1) {
    const agentId = `agent-${index % AGENTS}`;
    // Half the gaps name an intent the agent has seen before, half a new one.
    const intentKey = index % 2 === 0 ? `intent-${(index * 7) % INTENTS}-task` : `new-${index}-request`;
    const started = performance.now();
    await loop.recordGap({
      agentId,
      sessionId: (index % 5_000) + 1,
      traceId: `b${index}`,
      intentKey,
      reason: "no_skill",
      userText: "bench",
    });
    const recorded = performance.now();
    await loop.evaluate(agentId, intentKey, "no_skill");
    const evaluated = performance.now();
    record.push(evaluated - started);
    evaluate.push(evaluated - recorded);
    (index % 2 === 0 ? recordKnown : recordNew).push(recorded - started);
  }
  await store.close();
  rmSync(dir, { recursive: true, force: true });
  return {
    rows,
    p50: percentile(record, 50),
    p99: percentile(record, 99),
    evalP50: percentile(evaluate, 50),
    evalP99: percentile(evaluate, 99),
    newP50: percentile(recordNew, 50),
    knownP50: percentile(recordKnown, 50),
    seedSeconds,
  };
}

export async function runGapsBench(): Promise<string> {
  const results = [];
  for (const rows of SIZES) {
    process.stderr.write(`bench: gaps with ${rows} rows...\n`);
    results.push(await measure(rows));
  }
  return [
    `${SAMPLES} gaps recorded per size (${AGENTS} agents, ${INTENTS} intents, 4 reasons, a third of the rows outside the 72 h lookback). "record + evaluate" is the whole path a failing turn pays: key merge lookup, insert, cluster statistics.`,
    "",
    "| existing rows | record + evaluate p50 | p99 | evaluate only p50 | p99 | record, new intent key p50 | record, known key p50 |",
    "|---|---|---|---|---|---|---|",
    ...results.map(
      (result) =>
        `| ${result.rows.toLocaleString("en")} | ${formatMs(result.p50)} | ${formatMs(result.p99)} | ${formatMs(result.evalP50)} | ${formatMs(result.evalP99)} | ${formatMs(result.newP50)} | ${formatMs(result.knownP50)} |`,
    ),
    "",
    "A key never seen for the agent is compared with up to 500 of its recent keys (the similarity merge), which is most of the cost; a known key is an indexed lookup.",
  ].join("\n");
}
