/**
 * Shared set-up for the admin tests: a skill draft the gap loop made (its folder and its
 * rows), and the real admin server on 127.0.0.1:0 whose log lines the test can read.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import type { AdminServer } from "../../src/admin/admin-server.js";
import { launchAdmin } from "../../src/admin/launch-admin.js";
import { readAgentsFile } from "../../src/config/agents.js";
import { createLogger } from "../../src/log/logger.js";
import { systemClock } from "../../src/store/clock.js";
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
