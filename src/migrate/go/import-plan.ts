/**
 * `laoding import go` plan: what each part of the Go install becomes here, section by
 * section (env, skills, drafts, database rows, files), with what is skipped and why.
 * Planning writes nothing; apply carries out exactly this plan.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseEnvText, readEnvFile, type EnvEntries } from "../../config/env-file.js";
import type { RuntimeLayout } from "../../config/runtime-layout.js";
import type { MaintenancePool } from "../../runtime/library-maintenance.js";
import type { Store } from "../../store/store.js";
import { planEnv, shownValue, type EnvDecision } from "./env-mapping.js";
import { readGoDatabase, type GoDatabase } from "./go-database.js";
import type { GoInstall } from "./go-install.js";
import { planFiles, type FileImport } from "./files-import.js";
import { IMPORT_SOURCE } from "./rows-import.js";
import { planSkills, type SkillImport } from "./skills-import.js";

export type GoImportPlan = {
  install: GoInstall;
  agentId: string;
  channel: string;
  env: EnvDecision[];
  skills: SkillImport[];
  database?: GoDatabase;
  /** Source rows a previous import already brought in. */
  alreadyImported: number;
  files: FileImport[];
};

export type PlanContext = {
  layout: RuntimeLayout;
  repoRoot: string;
  maintenance: MaintenancePool;
  store: Store;
  agentId: string;
  channel?: string;
  maxCopyBytes: number;
  skipTables: string[];
};

const CHANNELS = ["console", "telegram", "feishu"];

export async function planGoImport(install: GoInstall, context: PlanContext): Promise<GoImportPlan> {
  const goEnv: EnvEntries = install.envFile
    ? parseEnvText(readFileSync(install.envFile, "utf8"), install.envFile)
    : new Map();
  const env = planEnv(goEnv, {
    goRoot: install.root,
    goDir: install.dir,
    workspaceEnv: readEnvFile(context.layout.envFile),
    seedEnv: readEnvFile(join(context.repoRoot, "configs", "env")),
  });
  const trees = context.layout.agentTrees(context.agentId);
  const skills = install.skillsDir
    ? await planSkills(install.skillsDir, {
        baseSkillsDir: context.layout.baseSkillsDir,
        agentId: context.agentId,
        draftsDir: trees.skillsDir,
        maintenance: context.maintenance,
      })
    : [];
  const database = install.databaseFile
    ? readGoDatabase(install.databaseFile, { skipTables: context.skipTables })
    : undefined;
  const keys = [...(database?.messages ?? []), ...(database?.gaps ?? [])].map((row) => row.importKey);
  let alreadyImported = 0;
  for (const key of keys)
    if (await context.store.importedRows.find(context.agentId, IMPORT_SOURCE, key)) alreadyImported += 1;
  const files = install.filesDir
    ? await planFiles(install.filesDir, {
        agentId: context.agentId,
        workTree: trees.workTree,
        maintenance: context.maintenance,
        maxCopyBytes: context.maxCopyBytes,
      })
    : [];
  return {
    install,
    agentId: context.agentId,
    channel: chooseChannel(context.channel, goEnv),
    env,
    skills,
    ...(database ? { database } : {}),
    alreadyImported,
    files,
  };
}

/** The channel the Go chats continue on: --channel, else the Go env's MESSAGE_CHANNEL (its first), else telegram. */
function chooseChannel(flag: string | undefined, goEnv: EnvEntries): string {
  if (flag !== undefined) {
    if (!CHANNELS.includes(flag)) throw new Error(`--channel must be one of ${CHANNELS.join(", ")}, not "${flag}"`);
    return flag;
  }
  const first = goEnv.get("MESSAGE_CHANNEL")?.split(",")[0]?.trim();
  return first && CHANNELS.includes(first) ? first : "telegram";
}

/** The plan as the operator reads it: every section, what maps where, what is skipped and why. */
export function formatPlan(plan: GoImportPlan): string[] {
  const out: string[] = [];
  const { install } = plan;
  out.push(
    `Go LaodingBot at ${install.dir} (its workspace: ${install.root}); into agent ${plan.agentId}, chats on channel ${plan.channel}`,
  );
  out.push(`env (${install.envFile ?? "no env file found"}): ${plan.env.length} variable(s)`);
  for (const decision of plan.env) {
    const value = shownValue(decision.goValue, decision.secret);
    const target = decision.name ? ` -> ${decision.name}=${shownValue(decision.value as string, decision.secret)}` : "";
    const write =
      decision.write === "kept-yours"
        ? ` [NOT written: configs/env already sets ${decision.name}=${shownValue(decision.existing as string, decision.secret)}; yours stays]`
        : decision.write === "replace-seeded"
          ? ` [replaces the seeded default ${decision.name}=${shownValue(decision.existing as string, decision.secret)}]`
          : decision.write === "same"
            ? " [already so]"
            : "";
    out.push(`  ${decision.action.padEnd(9)} ${decision.goName}=${value}${target}: ${decision.reason}${write}`);
  }
  const shared = plan.skills.filter((skill) => skill.kind === "skill");
  const drafts = plan.skills.filter((skill) => skill.kind === "draft");
  out.push(
    `skills (${install.skillsDir ?? "no skills/ found"}): ${shared.length} -> base skills (the workspace's skills/)`,
  );
  for (const skill of shared) out.push(`  ${skillLine(skill)}`);
  out.push(`drafts: ${drafts.length} auto_* -> agent ${plan.agentId}'s drafts folder`);
  for (const draft of drafts) out.push(`  ${skillLine(draft)}`);
  if (!plan.database) out.push("database: no data/*.db found (nothing to import)");
  else {
    out.push(`database ${plan.database.file}:`);
    for (const table of plan.database.tables) {
      if (!table.found) {
        out.push(`  ${table.table}: not read (absent or --skip-table)`);
        continue;
      }
      const target = table.table.includes("gap")
        ? "capability_gaps (clusters by agent, intent key, reason)"
        : `messages (one session per chat: agent ${plan.agentId}, channel ${plan.channel}, chat id)`;
      out.push(`  ${table.table}: ${table.rows} row(s) -> ${target}`);
      out.push(`    columns recognised: ${table.recognised.join(", ")}`);
      out.push(`    columns skipped: ${table.skippedColumns.length > 0 ? table.skippedColumns.join(", ") : "none"}`);
    }
    const skippedRows = plan.database.skippedRows;
    out.push(
      `  rows to import: ${plan.database.messages.length} message(s), ${plan.database.gaps.length} gap(s); already imported before: ${plan.alreadyImported}; rows skipped: ${skippedRows.length}`,
    );
    for (const row of skippedRows.slice(0, 20)) out.push(`    skipped ${row.table} row ${row.rowId}: ${row.reason}`);
    if (skippedRows.length > 20) out.push(`    ... and ${skippedRows.length - 20} more`);
    if (plan.database.otherTables.length > 0)
      out.push(`  tables skipped (not imported): ${plan.database.otherTables.join(", ")}`);
  }
  out.push(
    `files (${install.filesDir ?? "no workspace/ found"}): ${plan.files.length} -> agent ${plan.agentId}'s working tree`,
  );
  for (const file of plan.files)
    out.push(`  ${file.state.padEnd(7)} ${file.relativePath} -> ${file.dest}${file.reason ? `: ${file.reason}` : ""}`);
  return out;
}

function skillLine(skill: SkillImport): string {
  const label = skill.state === "same" ? "unchanged" : skill.state === "copy" ? "copy" : "SKIPPED";
  const derived = skill.derivedFrom
    ? ` (WARNING: no frontmatter; name from the folder, description from its ${skill.derivedFrom === "触发背景" ? "触发背景 section" : skill.derivedFrom})`
    : "";
  return `${label.padEnd(9)} ${skill.folder} -> ${skill.becomes} at ${skill.dest}${derived}${skill.reason ? `: ${skill.reason}` : ""}`;
}
