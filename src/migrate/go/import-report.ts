/**
 * After apply: every part checked again (the env values in configs/env, each skill and
 * file by sha256, each imported row present in the store with the same content) and the
 * report written to `<workspace>/data/go-import-<time>.json` (temp + rename).
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { readEnvFile, writeConfigFileAtomic } from "../../config/env-file.js";
import type { RuntimeLayout } from "../../config/runtime-layout.js";
import type { MaintenancePool } from "../../runtime/library-maintenance.js";
import type { Store } from "../../store/store.js";
import { sha256 } from "./go-files.js";
import type { GoImportPlan } from "./import-plan.js";
import { IMPORT_SOURCE, type RowsResult } from "./rows-import.js";

export type ImportReport = {
  from: string;
  agentId: string;
  channel: string;
  appliedAt: string;
  backup: string;
  env: { written: string[]; keptYours: string[]; dropped: string[] };
  skills: { copied: number; unchanged: number; skipped: string[] };
  rows: RowsResult;
  files: { copied: number; unchanged: number; skipped: string[] };
  verified: boolean;
  problems: string[];
  reportFile: string;
};

export async function verifyImport(
  plan: GoImportPlan,
  context: { layout: RuntimeLayout; store: Store; maintenance: MaintenancePool },
): Promise<string[]> {
  const problems: string[] = [];
  const env = readEnvFile(context.layout.envFile);
  for (const decision of plan.env) {
    if (decision.write !== "set" && decision.write !== "replace-seeded" && decision.write !== "same") continue;
    if (env?.get(decision.name as string) !== decision.value)
      problems.push(`configs/env: ${decision.name} is not the imported value`);
  }
  const files = context.maintenance.agent(plan.agentId).files;
  const throughToolhost: { path: string; sha256: string }[] = [];
  for (const skill of plan.skills) {
    if (skill.state === "skipped") continue;
    if (skill.kind === "draft") throughToolhost.push({ path: skill.dest, sha256: skill.sha256 as string });
    else if (!existsSync(skill.dest) || sha256(readFileSync(skill.dest)) !== skill.sha256)
      problems.push(`skill ${skill.dest} differs from what was imported`);
  }
  for (const file of plan.files)
    if (file.state !== "skipped") throughToolhost.push({ path: file.dest, sha256: file.sha256 as string });
  if (throughToolhost.length > 0) {
    const stats = await files.stat(
      throughToolhost.map((entry) => entry.path),
      true,
    );
    for (const [index, entry] of throughToolhost.entries()) {
      const stat = stats[index];
      if (!stat || "error" in stat || stat.sha256 !== entry.sha256)
        problems.push(
          `${entry.path} differs from what was imported (checked through agent ${plan.agentId}'s toolhost)`,
        );
    }
  }
  const { sql } = context.store;
  const message = (id: number) => sql.get<{ content: string }>(`SELECT content FROM messages WHERE id = ?`, [id]);
  const gap = (id: number) => sql.get<{ id: number }>(`SELECT id FROM capability_gaps WHERE id = ?`, [id]);
  for (const row of plan.database?.messages ?? []) {
    const imported = await context.store.importedRows.find(plan.agentId, IMPORT_SOURCE, row.importKey);
    if (!imported) problems.push(`message row ${row.rowId} was not imported`);
    else if (imported.targetId === null || (await message(imported.targetId))?.content !== row.content)
      problems.push(`message row ${row.rowId}: the imported message is missing or differs`);
  }
  for (const row of plan.database?.gaps ?? []) {
    const imported = await context.store.importedRows.find(plan.agentId, IMPORT_SOURCE, row.importKey);
    if (!imported || imported.targetId === null || !(await gap(imported.targetId)))
      problems.push(`gap row ${row.rowId} was not imported`);
  }
  return problems;
}

export function writeImportReport(dataDir: string, report: ImportReport, now: Date): string {
  const file = join(dataDir, `go-import-${now.toISOString().replace(/[:.]/g, "-")}.json`);
  writeConfigFileAtomic(file, `${JSON.stringify({ ...report, reportFile: file }, null, 2)}\n`);
  return file;
}
