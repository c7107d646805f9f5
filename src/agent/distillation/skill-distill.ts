/**
 * Level 2's writing step: a tag's live lessons become a candidate SKILL.md (by the model,
 * else the template), judged by the ratchet, then drafted (first version) or published,
 * and made the live version in one step.
 */
import type { Experience } from "../../store/experiences-store.js";
import type { SkillVersion } from "../../store/skill-versions-store.js";
import { judgeCandidate } from "./skill-ratchet.js";
import { allBullets } from "./skill-sections.js";
import { noSourcesReason, skillSources } from "./skill-sources.js";
import {
  distilledSkillName,
  gateDistilledSkill,
  renderDistilledTemplate,
  writeSkillWithModel,
} from "./skill-writer.js";
import { SKILL_TRIGGER, type SkillLoopOptions, type SkillOutcome } from "./skill-loop.js";

/** The tag's lessons a skill may be distilled from: shown by the read-time gate, and not failing (skill-sources.ts). */
export async function liveLessons(options: SkillLoopOptions, agentId: string, tag: string): Promise<Experience[]> {
  return (await skillSources(options.store, agentId, tag, options.clock.now())).lessons;
}

/** Per recorded task of the tag, the lessons it produced or was shown: the offline evidence. */
async function taskLessons(options: SkillLoopOptions, agentId: string, tag: string): Promise<number[][]> {
  const lessons = await liveLessons(options, agentId, tag);
  const byTrace = new Map<string, Set<number>>();
  for (const lesson of lessons) {
    if (lesson.taskTraceId)
      byTrace.set(lesson.taskTraceId, new Set([...(byTrace.get(lesson.taskTraceId) ?? []), lesson.id]));
    for (const row of await options.store.injections.byExperience(lesson.id))
      if (row.cited) byTrace.set(row.traceId, new Set([...(byTrace.get(row.traceId) ?? []), lesson.id]));
  }
  return [...byTrace.values()].map((ids) => [...ids]);
}

async function writeText(
  options: SkillLoopOptions,
  agentId: string,
  name: string,
  tag: string,
  lessons: Experience[],
  previous: string | undefined,
): Promise<{ text: string; author: "model" | "template" } | { error: string }> {
  const created = new Date(options.clock.now()).toISOString().slice(0, 10);
  const expected = { name, tag, locale: options.locale, lessonIds: new Set(lessons.map((lesson) => lesson.id)) };
  if (options.model) {
    const written = await writeSkillWithModel({
      model: options.model,
      name,
      tag,
      lessons,
      locale: options.locale,
      created,
      agentId,
      ...(previous ? { previous } : {}),
    });
    const gate = written.ok ? gateDistilledSkill(written.text, expected) : written;
    if (gate.ok) return { text: gate.text, author: "model" };
    options.logger.warn({ agentId, tag, problem: gate.error }, "the model's skill failed the gate; using the template");
  }
  const template = renderDistilledTemplate(name, tag, lessons, options.locale, created);
  const gate = gateDistilledSkill(template, expected);
  return gate.ok ? { text: template, author: "template" } : { error: gate.error };
}

/** Success rate of the tag's recent settled tasks: the baseline a new version must not fall below. */
async function tagRate(options: SkillLoopOptions, agentId: string, tag: string): Promise<number | null> {
  const runs = (await options.store.distillRuns.byAgent(agentId))
    .filter((run) => run.outcome && run.tags.split(" ").includes(tag))
    .slice(-20);
  return runs.length === 0 ? null : runs.filter((run) => run.outcome === "success").length / runs.length;
}

export async function distill(
  options: SkillLoopOptions,
  agentId: string,
  tag: string,
  request: { asked?: boolean; forceActive?: boolean } = {},
): Promise<SkillOutcome> {
  const { store, logger, clock } = options;
  const name = distilledSkillName(tag);
  const versions = await store.skillVersions.versions(agentId, name);
  const last = versions.at(-1);
  if (!request.asked && last && clock.now() - last.createdAt < SKILL_TRIGGER.debounceMs)
    return {
      action: "skipped",
      why: "a version was written in the last 24 hours",
      words: { key: "skillDebounced", values: { hours: 24 } },
    };
  const sources = await skillSources(store, agentId, tag, clock.now());
  const { lessons } = sources;
  if (lessons.length === 0) return skipped(options, agentId, name, noSourcesReason(tag, sources));
  const active = await store.skillVersions.active(agentId, name);
  const written = await writeText(options, agentId, name, tag, lessons, active?.content);
  if ("error" in written) return { action: "skipped", why: written.error };
  const candidate = await store.skillVersions.add({
    agentId,
    skillName: name,
    tag,
    content: written.text,
    bullets: allBullets(written.text).length,
    actor: written.author === "model" ? "skill-distiller" : "skill-template",
  });
  const verdict = request.forceActive
    ? ({ accept: true } as const)
    : judgeCandidate({
        candidate: written.text,
        active: active?.content,
        taskLessons: await taskLessons(options, agentId, tag),
      });
  if (!verdict.accept) {
    await store.skillVersions.setStatus(candidate.id, "rejected", {
      action: "reject",
      reason: verdict.reason,
      actor: "ratchet",
    });
    logger.info(
      { agentId, skill: name, version: candidate.version, why: verdict.reason },
      "distilled skill version rejected by the ratchet",
    );
    return {
      action: "rejected",
      skillName: name,
      version: candidate.version,
      why: verdict.reason,
      words: verdict.words,
    };
  }
  if (!active && versions.length === 0) {
    const result = await options.writeDraft(agentId, name, written.text);
    if (!result.written) {
      await store.skillVersions.setStatus(candidate.id, "rejected", {
        action: "reject",
        reason: result.reason,
        actor: "ratchet",
      });
      return { action: "rejected", skillName: name, version: candidate.version, why: result.reason };
    }
  } else await options.publishSkill(agentId, name, written.text);
  await goLive(options, { agentId, name, tag, lessons, candidate, active, forced: request.forceActive === true });
  options.catalog(agentId).reload();
  logger.info(
    { agentId, skill: name, version: candidate.version, author: written.author, lessons: lessons.length },
    "distilled skill version published",
  );
  return {
    action: versions.length === 0 ? "drafted" : "published",
    skillName: name,
    version: candidate.version,
    author: written.author,
  };
}

function skipped(options: SkillLoopOptions, agentId: string, skill: string, why: string): SkillOutcome {
  options.logger.info({ agentId, skill, why }, "skill distillation skipped");
  return { action: "skipped", why };
}

/** The candidate becomes the live version, the old one retired, its lessons marked as distilled: one step. */
async function goLive(
  options: SkillLoopOptions,
  input: {
    agentId: string;
    name: string;
    tag: string;
    lessons: Experience[];
    candidate: SkillVersion;
    active: SkillVersion | undefined;
    forced: boolean;
  },
): Promise<void> {
  const { store } = options;
  const { agentId, name, tag, lessons, candidate, active } = input;
  const baseline =
    active && active.trialUses > 0 ? active.trialSuccesses / active.trialUses : await tagRate(options, agentId, tag);
  // The switch of live version is one step: nobody reads the skill with no version live.
  await store.transaction(async () => {
    if (active)
      await store.skillVersions.setStatus(active.id, "retired", {
        action: "retire",
        reason: `replaced by v${candidate.version}`,
        actor: "ratchet",
      });
    await store.skillVersions.setStatus(
      candidate.id,
      "active",
      {
        action: input.forced ? "force-activate" : "activate",
        reason: input.forced ? "forced active by an operator" : "passed the ratchet",
        actor: input.forced ? "operator" : "ratchet",
      },
      { baselineRate: baseline },
    );
    for (const lesson of lessons)
      if (lesson.skillName !== name)
        await store.experiences.change(
          lesson.id,
          { skillName: name },
          { action: "distilled-into-skill", reason: `${name} v${candidate.version}`, actor: "skill-distiller" },
        );
  });
}
