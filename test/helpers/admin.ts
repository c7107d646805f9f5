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
import { formatExperienceId, type ExperienceCategory, type ExperienceStatus } from "../../src/store/experiences-store.js";
import { openStore } from "../../src/store/store.js";
import { CLI_ENTRY, type RealWorkspace } from "./real-toolhost.js";

/**
 * Agent `agentId` recorded three `export_report` gaps and the gap loop drafted
 * `auto-export-report` for them. Returns the draft's folder (hand it to the agent after).
 */
export function seedExportReportDraft(workspace: RealWorkspace, agentId: string, skillBody: string): string {
  const draftDir = join(workspace.layout.agentTrees(agentId).skillsDir, "auto-export-report");
  mkdirSync(draftDir, { recursive: true });
  writeFileSync(join(draftDir, "SKILL.md"), `---\nname: auto-export-report\ndescription: draft\nstatus: draft\n---\n${skillBody}`);
  const store = openStore(workspace.layout.databaseFile, systemClock);
  try {
    for (let index = 0; index < 3; index += 1) {
      store.gaps.record({ agentId, traceId: `t${index}`, intentKey: "export_report", reason: "no_skill", gapClass: "capability", userText: `export the report ${index}` });
    }
    store.clusters.claimDraft(agentId, "export_report", "auto-export-report", 3);
    store.clusters.settleDraft(agentId, "export_report", { status: "drafted", skillName: "auto-export-report", path: join(draftDir, "SKILL.md") });
  } finally {
    store.close();
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
export function seedLessons(workspace: RealWorkspace, agentId: string): SeededLessons {
  const store = openStore(workspace.layout.databaseFile, systemClock);
  try {
    const add = (summary: string, category: ExperienceCategory, tags: string[], status: ExperienceStatus) =>
      store.experiences.add({ agentId, source: "error_correction", summary, category, confidence: 0.6, status, createdBy: "distiller", contentHash: contentHash(summary), tags });
    const deploy = add("Pass --force-tls when you deploy the gateway; it rejects plain connections.", "pitfall", ["deploy"], "active");
    const backup = add("Check the backup's size before you rotate the old ones.", "best_practice", ["backup"], "draft");
    const stale = add("Restart the cache after a schema change.", "pattern", ["cache"], "active");
    store.experiences.change(stale.id, { status: "deprecated", deprecatedReason: "the cache reloads itself now" }, { action: "deprecate", reason: "the cache reloads itself now", actor: "operator" });
    const settle = (trace: string, lessonId: number, tag: string, arm: "treatment" | "holdout", outcome: "success" | "failure") => {
      store.injections.record(agentId, trace, arm, [lessonId]);
      if (arm === "treatment") {
        // As the loop counts them: shown to the model, then cited by it.
        store.experiences.countInjected(lessonId);
        store.injections.cite(trace, [lessonId]);
        store.experiences.countUsed(lessonId);
      }
      store.injections.settle(trace, outcome);
      store.distillRuns.record({ agentId, traceId: trace, promptVersion: 1, status: "skipped", skipReason: "a routine success", outcome, tags: [tag] });
    };
    for (let index = 0; index < 20; index += 1) settle(`${agentId}-deploy-t${index}`, deploy.id, "deploy", "treatment", index < 18 ? "success" : "failure");
    for (let index = 0; index < 10; index += 1) settle(`${agentId}-deploy-h${index}`, deploy.id, "deploy", "holdout", index < 3 ? "success" : "failure");
    settle(`${agentId}-backup-t0`, backup.id, "backup", "treatment", "success");
    settle(`${agentId}-backup-h0`, backup.id, "backup", "holdout", "failure");
    return { deploy: formatExperienceId(deploy.id), backup: formatExperienceId(backup.id), stale: formatExperienceId(stale.id) };
  } finally {
    store.close();
  }
}

/** The admin server as `laoding admin` starts it; every log line lands in `logLines`. */
export function launchTestAdmin(workspace: RealWorkspace, options: { secrets: string[]; logLines: string[] }): Promise<AdminServer> {
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
