import { curateAgent } from "../../agent/distillation/curate.js";
import { effectReport, formatComparison, formatLessonEvidence } from "../../agent/distillation/effect-report.js";
import { lessonStats } from "../../agent/distillation/lesson-stats.js";
import { isHeld } from "../../agent/distillation/lesson-hold.js";
import { distilledSkillStates, skillStateLines, type SkillStateView } from "../../agent/distillation/skill-report.js";
import {
  addManualLesson,
  deprecateLesson,
  findLesson,
  lessonView as view,
  pinLesson,
  restoreLesson,
} from "../../agent/distillation/operator-actions.js";
import {
  EXPERIENCE_CATEGORIES,
  EXPERIENCE_STATUSES,
  formatExperienceId,
  type Experience,
  type ExperienceCategory,
  type ExperienceStatus,
} from "../../store/experiences-store.js";
import { systemClock } from "../../store/clock.js";
import type { SkillVersion } from "../../store/skill-versions-store.js";
import { openStore, type Store } from "../../store/store.js";
import { bootstrap } from "../bootstrap.js";
import { UsageError, writeLine, type Command } from "../cli-context.js";
import { parseFlags, WORKSPACE_FLAG } from "../parse-flags.js";

/** Injections `experiences show` lists (the latest; --json has them all). */
const SHOWN_INJECTIONS = 20;

const usage = `Usage: laoding experiences <action> [options]

  list [--status S]          lessons with status, confidence, adoption and tags; --status held:
                             lessons naming a command run from the network, waiting for approval
  show <exp-id>              one lesson with its injections and its ledger
  deprecate <exp-id> [--reason TEXT]
  restore <exp-id>           a deprecated lesson back to draft (its counters start afresh);
                             on a held lesson this approves it, and deprecate rejects it
  pin <exp-id> | unpin <exp-id>   pinned lessons are exempt from the lifecycle
  add --tags a,b [--category C] "summary"   a manual lesson (active, exempt)
  curate                     run the lifecycle now (it also runs daily and after each task)
  distill <tag>              ask the running bot to distil the tag's lessons into a skill
                             (done within a minute by \`laoding start\`, which owns the toolhosts)
  skills                     distilled skills: state (draft/active/deprecated) and why, uses,
                             last use, versions, trials, and distill requests
  report                     treatment vs holdout success with 95% intervals, per tag and lesson

Options:
  --agent ID        the agent (default: the first; list/report/curate: all)
  --json            machine-readable output
${WORKSPACE_FLAG.help()}
  -h, --help        show this help`;

export const experiencesCommand: Command = {
  name: "experiences",
  summary: "distilled lessons: list, show, deprecate, restore, pin, curate, and the effect report",
  usage,
  async run(context) {
    const { values, positionals } = parseFlags(
      context.args,
      {
        agent: { type: "string" },
        json: { type: "boolean" },
        ...WORKSPACE_FLAG.option,
        status: { type: "string" },
        reason: { type: "string" },
        tags: { type: "string" },
        category: { type: "string" },
      },
      usage,
      true,
    );
    if (values.help) return (writeLine(context.stdout, usage), 0);
    const [action, target] = positionals;
    if (!action) throw new UsageError("name an action", usage);
    const boot = bootstrap(context, {
      seed: false,
      workspaceDir: values.workspace,
      logRouting: { interactive: () => false },
    });
    const agents = boot.agents.filter((agent) => !values.agent || agent.id === values.agent).map((agent) => agent.id);
    if (agents.length === 0) throw new UsageError(`no agent "${values.agent}"`, usage);
    const store = await openStore(boot.layout.databaseTarget, systemClock);
    const out = (value: unknown, text: () => string[]) => {
      if (values.json) writeLine(context.stdout, JSON.stringify(value, null, 2));
      else for (const line of text()) writeLine(context.stdout, line);
      return 0;
    };
    const needTarget = async () => {
      if (!target) throw new UsageError(`${action} needs a lesson id (exp-000123)`, usage);
      return await findLesson(store, target);
    };
    try {
      switch (action) {
        case "list": {
          const held = values.status === "held";
          const status = held ? "deprecated" : (values.status as ExperienceStatus | undefined);
          if (status && !(EXPERIENCE_STATUSES as readonly string[]).includes(status))
            throw new UsageError(`--status must be one of ${EXPERIENCE_STATUSES.join(", ")}, held`, usage);
          const listed: Experience[] = [];
          for (const agentId of agents) listed.push(...(await store.experiences.list(agentId, status)));
          const lessons = listed.filter((lesson) => !held || isHeld(lesson));
          return out(lessons.map(view), () => (lessons.length === 0 ? ["no lessons yet"] : lessons.map(line)));
        }
        case "show": {
          const lesson = await needTarget();
          const injections = await store.injections.byExperience(lesson.id);
          const ledger = await store.ledger.bySubject("experience", formatExperienceId(lesson.id));
          const evidence = await lessonStats(store, lesson, Date.now());
          return out({ lesson: view(lesson), evidence, injections, ledger }, () => [
            line(lesson),
            `  source ${lesson.source} · task ${lesson.taskTraceId ?? "-"} · created by ${lesson.createdBy} · ${time(lesson.createdAt)}`,
            `  support ${lesson.supportCount} · contradicted ${lesson.contradictCount} · shown ${lesson.injectedCount} · cited ${lesson.usageCount}${lesson.deprecatedReason ? ` · ${isHeld(lesson) ? "" : "deprecated: "}${lesson.deprecatedReason}` : ""}`,
            // What the lifecycle judges by: outcomes since its last status change.
            `  since its last status change: used ${evidence.uses ?? 0} · succeeded ${evidence.successes ?? 0} · cited uses that succeeded ${evidence.citedSuccesses ?? 0} · holdout on its tags ${evidence.holdout.successes}/${evidence.holdout.n}`,
            `  injections (latest ${Math.min(injections.length, SHOWN_INJECTIONS)} of ${injections.length}):`,
            ...injections
              .slice(-SHOWN_INJECTIONS)
              .map(
                (row) =>
                  `    ${time(row.createdAt)} ${row.arm} ${row.traceId}${row.cited ? " cited" : ""} → ${row.outcomeKind ?? "not settled"}`,
              ),
            "  ledger:",
            ...ledger.map(
              (entry) =>
                `    ${time(entry.createdAt)} ${entry.action} by ${entry.actor}${entry.reason ? `: ${entry.reason}` : ""}`,
            ),
          ]);
        }
        case "deprecate": {
          const lesson = await deprecateLesson(store, await needTarget(), values.reason ?? "deprecated by an operator");
          return out(view(lesson), () => [
            `deprecated ${formatExperienceId(lesson.id)}; \`laoding experiences restore ${formatExperienceId(lesson.id)}\` undoes it`,
          ]);
        }
        case "restore": {
          const lesson = await restoreLesson(store, await needTarget());
          return out(view(lesson), () => [
            `${lesson.approvedBy ? "approved and restored" : "restored"} ${formatExperienceId(lesson.id)} as a draft`,
          ]);
        }
        case "pin":
        case "unpin": {
          const lesson = await pinLesson(store, await needTarget(), action === "pin");
          return out(view(lesson), () => [`${action}ned ${formatExperienceId(lesson.id)}`]);
        }
        case "add": {
          const summary = positionals.slice(1).join(" ").trim();
          const category = (values.category ?? "best_practice") as ExperienceCategory;
          if (!(EXPERIENCE_CATEGORIES as readonly string[]).includes(category))
            throw new UsageError(`--category must be one of ${EXPERIENCE_CATEGORIES.join(", ")}`, usage);
          if (!values.tags) throw new UsageError("add needs --tags (what tasks it is about)", usage);
          const lesson = await addManualLesson(store, {
            agentId: agents[0] as string,
            summary,
            tags: values.tags.split(","),
            category,
          });
          return out(view(lesson), () => [`added ${formatExperienceId(lesson.id)} (manual, active)`]);
        }
        case "curate": {
          const changes: { agentId: string; changes: Awaited<ReturnType<typeof curateAgent>> }[] = [];
          for (const agentId of agents)
            changes.push({ agentId, changes: await curateAgent(store, agentId, systemClock.now(), "operator-curate") });
          return out(changes, () =>
            changes.flatMap((entry) =>
              entry.changes.length === 0
                ? [`agent ${entry.agentId}: no changes`]
                : entry.changes.map(
                    (change) =>
                      `agent ${entry.agentId}: ${formatExperienceId(change.experienceId)} ${change.from} -> ${change.to} (${change.reason})`,
                  ),
            ),
          );
        }
        case "distill": {
          if (!target) throw new UsageError("distill needs a tag (see the tags in `laoding experiences list`)", usage);
          const agentId = agents[0] as string;
          const id = await store.skillVersions.requestDistill(agentId, target.toLowerCase());
          return out({ request: id, agentId, tag: target.toLowerCase() }, () => [
            `request ${id} queued for ${agentId}: the running bot distils "${target.toLowerCase()}" within a minute; check with \`laoding experiences skills\``,
          ]);
        }
        case "skills": {
          const result: {
            agentId: string;
            skills: SkillStateView[];
            versions: Omit<SkillVersion, "content">[];
            requests: Awaited<ReturnType<Store["skillVersions"]["requests"]>>;
          }[] = [];
          for (const agentId of agents) {
            const versions = (await store.skillVersions.all(agentId)).map(({ content: _content, ...row }) => row);
            const skills = await distilledSkillStates(store, agentId);
            result.push({ agentId, skills, versions, requests: await store.skillVersions.requests(agentId) });
          }
          return out(result, () =>
            result.flatMap((entry) => [
              `agent ${entry.agentId}`,
              ...entry.skills.flatMap((skill) => [
                ...skillStateLines(skill, time),
                ...entry.versions
                  .filter((row) => row.skillName === skill.skillName)
                  .map(
                    (row) =>
                      `    v${row.version} ${row.status} · ${row.bullets} bullets · trial ${row.trialSuccesses}/${row.trialUses}`,
                  ),
              ]),
              ...entry.requests.map(
                (request) =>
                  `  request ${request.id} "${request.tag}": ${request.outcome ?? "waiting for the running bot"}`,
              ),
            ]),
          );
        }
        case "report": {
          const reports: Awaited<ReturnType<typeof effectReport>>[] = [];
          for (const agentId of agents) reports.push(await effectReport(store, agentId));
          return out(reports, () => reports.flatMap(reportLines));
        }
        default:
          throw new UsageError(`unknown action "${action}"`, usage);
      }
    } finally {
      await store.close();
    }
  },
};

function reportLines(report: Awaited<ReturnType<typeof effectReport>>): string[] {
  return [
    `agent ${report.agentId}`,
    `  overall: ${formatComparison(report.overall)}`,
    `  lessons created ${report.created} · promoted ${report.promoted} · deprecated ${report.deprecated} · phantom citations ${report.phantomCitations}`,
    `  distiller calls ${report.distillCalls} (tasks skipped by the gates ${report.skipped}) · tokens ${report.tokens}`,
    `  tasks by outcome: ${
      Object.entries(report.outcomeKinds)
        .map(([kind, count]) => `${kind} ${count}`)
        .join(" · ") || "-"
    }`,
    ...(report.byTag.length > 0
      ? ["  by tag:", ...report.byTag.map((tag) => `    ${tag.tag}: ${formatComparison(tag)}`)]
      : []),
    ...(report.lessons.length > 0
      ? [
          "  by lesson:",
          ...report.lessons.map(
            (lesson) =>
              `    ${lesson.id} [${lesson.status}] shown ${lesson.injected} · ${formatLessonEvidence(lesson)} · adoption ${lesson.adoption === null ? "-" : `${Math.round(lesson.adoption * 100)}%`} · ${formatComparison(lesson.comparison)}`,
          ),
        ]
      : []),
  ];
}

function line(lesson: Experience): string {
  const adoption =
    lesson.injectedCount === 0 ? "-" : `${Math.round((lesson.usageCount / lesson.injectedCount) * 100)}%`;
  return `${formatExperienceId(lesson.id)} [${isHeld(lesson) ? "held" : lesson.status}${lesson.pinned ? ", pinned" : ""}] ${lesson.agentId} · ${lesson.category} · conf ${lesson.confidence} · adoption ${adoption} · tags ${lesson.tags.join(",")}\n  ${lesson.summary}`;
}

function time(ms: number): string {
  return new Date(ms).toISOString().replace("T", " ").slice(0, 19);
}
