/**
 * Shared set-up for the admin tests: a skill draft the gap loop made (its folder and its
 * rows), and the real admin server on 127.0.0.1:0 whose log lines the test can read.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import type { AdminServer } from "../../src/admin/admin-server.js";
import { launchAdmin } from "../../src/admin/launch-admin.js";
import { contentHash } from "../../src/agent/distillation/lesson-rules.js";
import { readAgentsFile } from "../../src/config/agents.js";
import { createLogger } from "../../src/log/logger.js";
import { systemClock } from "../../src/store/clock.js";
import {
  formatExperienceId,
  type ExperienceCategory,
  type ExperienceStatus,
} from "../../src/store/experiences-store.js";
import { openStore } from "../../src/store/store.js";
import { CLI_ENTRY, type RealWorkspace } from "./real-toolhost.js";

/**
 * Agent `agentId` recorded three `export_report` gaps and the gap loop drafted
 * `auto-export-report` for them. Returns the draft's folder (hand it to the agent after).
 */
export async function seedExportReportDraft(
  workspace: RealWorkspace,
  agentId: string,
  skillBody: string,
): Promise<string> {
  const draftDir = join(workspace.layout.agentTrees(agentId).skillsDir, "auto-export-report");
  mkdirSync(draftDir, { recursive: true });
  writeFileSync(
    join(draftDir, "SKILL.md"),
    `---\nname: auto-export-report\ndescription: draft\nstatus: draft\n---\n${skillBody}`,
  );
  const store = await openStore(workspace.layout.databaseTarget, systemClock);
  try {
    for (let index = 0; index < 3; index += 1) {
      await store.gaps.record({
        agentId,
        traceId: `t${index}`,
        intentKey: "export_report",
        reason: "no_skill",
        gapClass: "capability",
        userText: `export the report ${index}`,
      });
    }
    await store.clusters.claimDraft(agentId, "export_report", "auto-export-report", 3);
    await store.clusters.settleDraft(agentId, "export_report", {
      status: "drafted",
      skillName: "auto-export-report",
      path: join(draftDir, "SKILL.md"),
    });
  } finally {
    await store.close();
  }
  return draftDir;
}

export type SeededLessons = { deploy: string; backup: string; stale: string };

/**
 * Three lessons of agent `agentId` as the distillation loop leaves them: an active
 * "deploy" lesson whose tasks settled (20 treatment at 90%, 10 holdout at 30%: enough for
 * an interval), a draft "backup" lesson with two tasks (insufficient data) and a
 * deprecated one. Returns their `exp-NNNNNN` ids.
 */
export async function seedLessons(workspace: RealWorkspace, agentId: string): Promise<SeededLessons> {
  const store = await openStore(workspace.layout.databaseTarget, systemClock);
  try {
    const add = (summary: string, category: ExperienceCategory, tags: string[], status: ExperienceStatus) =>
      store.experiences.add({
        agentId,
        source: "error_correction",
        summary,
        category,
        confidence: 0.6,
        status,
        createdBy: "distiller",
        contentHash: contentHash(summary),
        tags,
      });
    const deploy = await add(
      "Pass --force-tls when you deploy the gateway; it rejects plain connections.",
      "pitfall",
      ["deploy"],
      "active",
    );
    const backup = await add(
      "Check the backup's size before you rotate the old ones.",
      "best_practice",
      ["backup"],
      "draft",
    );
    const stale = await add("Restart the cache after a schema change.", "pattern", ["cache"], "active");
    await store.experiences.change(
      stale.id,
      { status: "deprecated", deprecatedReason: "the cache reloads itself now" },
      { action: "deprecate", reason: "the cache reloads itself now", actor: "operator" },
    );
    const settle = async (
      trace: string,
      lessonId: number,
      tag: string,
      arm: "treatment" | "holdout",
      outcome: "success" | "failure",
    ) => {
      await store.injections.record(agentId, trace, arm, [lessonId]);
      if (arm === "treatment") {
        // As the loop counts them: shown to the model, then cited by it.
        await store.experiences.countInjected(lessonId);
        await store.injections.cite(trace, [lessonId]);
        await store.experiences.countUsed(lessonId);
      }
      await store.injections.settle(trace, outcome);
      await store.distillRuns.record({
        agentId,
        traceId: trace,
        promptVersion: 1,
        status: "skipped",
        skipReason: "a routine success",
        outcome,
        tags: [tag],
      });
    };
    for (let index = 0; index < 20; index += 1)
      await settle(`${agentId}-deploy-t${index}`, deploy.id, "deploy", "treatment", index < 18 ? "success" : "failure");
    for (let index = 0; index < 10; index += 1)
      await settle(`${agentId}-deploy-h${index}`, deploy.id, "deploy", "holdout", index < 3 ? "success" : "failure");
    await settle(`${agentId}-backup-t0`, backup.id, "backup", "treatment", "success");
    await settle(`${agentId}-backup-h0`, backup.id, "backup", "holdout", "failure");
    return {
      deploy: formatExperienceId(deploy.id),
      backup: formatExperienceId(backup.id),
      stale: formatExperienceId(stale.id),
    };
  } finally {
    await store.close();
  }
}

/** The admin server as `laoding admin` starts it; every log line lands in `logLines`. */
export function launchTestAdmin(
  workspace: RealWorkspace,
  options: { secrets: string[]; logLines: string[] },
): Promise<AdminServer> {
  const sink = new PassThrough();
  sink.on("data", (chunk: Buffer) => options.logLines.push(...chunk.toString("utf8").split("\n").filter(Boolean)));
  return launchAdmin({
    config: workspace.config,
    layout: workspace.layout,
    agents: readAgentsFile(workspace.layout.agentsFile),
    channels: ["console"],
    logger: createLogger({ level: "info", secrets: options.secrets, destination: sink }),
    cliEntry: CLI_ENTRY,
    version: "9.9.9-test",
    port: 0,
    onWarning: () => undefined,
  });
}
