/**
 * `laoding import go --apply`: backup first, then the env merged (atomic), the skills into
 * the workspace's skills/ (root's folder, written temp + rename), the drafts and files
 * through the agent's toolhost, the rows in one transaction; then everything verified and
 * the report written. Each step skips what is already there, so a second apply changes
 * nothing and its report says so.
 */
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { writeConfigFileAtomic } from "../../config/env-file.js";
import type { RuntimeLayout } from "../../config/runtime-layout.js";
import type { MaintenancePool } from "../../runtime/library-maintenance.js";
import type { Store } from "../../store/store.js";
import { mergeEnvText } from "./env-mapping.js";
import { copyFiles } from "./files-import.js";
import { writeImportBackup } from "./import-backup.js";
import type { GoImportPlan } from "./import-plan.js";
import { verifyImport, writeImportReport, type ImportReport } from "./import-report.js";
import { importRows } from "./rows-import.js";

export type ApplyContext = {
  layout: RuntimeLayout;
  store: Store;
  maintenance: MaintenancePool;
  now: Date;
  lookbackHours: number;
  maxCopyBytes: number;
  report: (line: string) => void;
};

export async function applyGoImport(plan: GoImportPlan, context: ApplyContext): Promise<ImportReport> {
  const say = context.report;
  const backup = await writeImportBackup(context.layout, context.store, context.now);
  say(`backup written: ${backup.dir} (${backup.files.map((file) => file.slice(backup.dir.length + 1)).join(", ")})`);
  if (backup.databaseNotCopied) say(`no database backup: ${backup.databaseNotCopied}`);

  const envWrites = plan.env.filter((decision) => decision.write === "set" || decision.write === "replace-seeded");
  if (envWrites.length > 0) {
    const existing = existsSync(context.layout.envFile) ? readFileSync(context.layout.envFile, "utf8") : "";
    mkdirSync(dirname(context.layout.envFile), { recursive: true, mode: 0o700 });
    writeConfigFileAtomic(
      context.layout.envFile,
      mergeEnvText(existing, plan.env, plan.install.envFile ?? plan.install.dir),
    );
  }
  const keptYours = plan.env.filter((decision) => decision.write === "kept-yours").map((decision) => decision.name);
  say(
    `env: ${envWrites.length} variable(s) written to ${context.layout.envFile}${keptYours.length > 0 ? `; your own ${keptYours.join(", ")} left as set` : ""}`,
  );

  const skills = plan.skills.filter((skill) => skill.state === "copy");
  for (const [index, skill] of skills.entries()) {
    const content = skill.content as Buffer;
    if (skill.kind === "draft")
      await context.maintenance.agent(skill.agentId as string).files.writeFile(skill.dest, content, { mode: 0o644 });
    else writeSkillFile(skill.dest, content);
    say(`  [${index + 1}/${skills.length}] ${skill.kind} ${skill.folder} -> ${skill.dest}`);
  }
  say(
    `skills: ${skills.length} copied, ${plan.skills.filter((skill) => skill.state === "same").length} already there, ${plan.skills.filter((skill) => skill.state === "skipped").length} skipped`,
  );

  const rows = plan.database
    ? await importRows(context.store, plan.database, plan.skills, {
        agentId: plan.agentId,
        channel: plan.channel,
        lookbackSinceMs: context.now.getTime() - context.lookbackHours * 3_600_000,
      })
    : { messages: 0, gaps: 0, sessions: 0, alreadyImported: 0, drafts: 0 };
  say(
    `database: ${rows.messages} message(s) in ${rows.sessions} new session(s), ${rows.gaps} gap(s), ${rows.drafts} draft(s) recorded; ${rows.alreadyImported} row(s) imported before`,
  );

  const copied = await copyFiles(
    plan.files,
    {
      agentId: plan.agentId,
      workTree: context.layout.agentTrees(plan.agentId).workTree,
      maintenance: context.maintenance,
      maxCopyBytes: context.maxCopyBytes,
    },
    say,
  );
  say(
    `files: ${copied} copied, ${plan.files.filter((file) => file.state === "same").length} already there, ${plan.files.filter((file) => file.state === "skipped").length} skipped`,
  );

  const problems = await verifyImport(plan, context);
  const report: ImportReport = {
    from: plan.install.dir,
    agentId: plan.agentId,
    channel: plan.channel,
    appliedAt: context.now.toISOString(),
    backup: backup.dir,
    env: {
      written: envWrites.map((decision) => decision.name as string),
      keptYours: keptYours as string[],
      dropped: plan.env
        .filter((decision) => decision.action === "dropped")
        .map((decision) => `${decision.goName}: ${decision.reason}`),
    },
    skills: {
      copied: skills.length,
      unchanged: plan.skills.filter((skill) => skill.state === "same").length,
      skipped: plan.skills
        .filter((skill) => skill.state === "skipped")
        .map((skill) => `${skill.folder}: ${skill.reason}`),
    },
    rows,
    files: {
      copied,
      unchanged: plan.files.filter((file) => file.state === "same").length,
      skipped: plan.files
        .filter((file) => file.state === "skipped")
        .map((file) => `${file.relativePath}: ${file.reason}`),
    },
    verified: problems.length === 0,
    problems,
    reportFile: "",
  };
  report.reportFile = writeImportReport(context.layout.dataDir, report, context.now);
  return report;
}

/** A base skill written as root (skills/ is root's, not an agent's tree): temp + rename, never over another file. */
function writeSkillFile(path: string, content: Buffer): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o755 });
  const temp = join(dirname(path), `.SKILL.md.tmp-${randomBytes(6).toString("hex")}`);
  writeFileSync(temp, content, { mode: 0o644, flag: "wx" });
  renameSync(temp, path);
}
