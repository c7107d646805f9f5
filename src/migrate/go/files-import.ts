/**
 * The Go bot's working folder (`workspace/workspace`) into the agent's working tree
 * (`workspace/<agent>/`), paths kept. Destinations are checked and written through the
 * agent's own toolhost (DECISIONS.md: never as root in an agent's tree): a file already
 * there with the same bytes is left alone, a different one is never overwritten (skipped,
 * with the reason), so a second import copies nothing.
 */
import { join } from "node:path";
import type { MaintenancePool } from "../../runtime/library-maintenance.js";
import { readGoFile, sha256, walkGoFolder } from "./go-files.js";

export type FileImport = {
  relativePath: string;
  source: string;
  dest: string;
  sizeBytes: number;
  mode: number;
  state: "copy" | "same" | "skipped";
  reason?: string;
  sha256?: string;
};

export type FilesContext = { agentId: string; workTree: string; maintenance: MaintenancePool; maxCopyBytes: number };

export async function planFiles(goFilesDir: string, context: FilesContext): Promise<FileImport[]> {
  const plans: FileImport[] = walkGoFolder(goFilesDir).map((entry) => {
    const dest = join(context.workTree, entry.relativePath);
    if ("refused" in entry)
      return {
        relativePath: entry.relativePath,
        source: entry.path,
        dest,
        sizeBytes: 0,
        mode: 0,
        state: "skipped",
        reason: entry.refused,
      };
    if (entry.sizeBytes > context.maxCopyBytes)
      return {
        relativePath: entry.relativePath,
        source: entry.path,
        dest,
        sizeBytes: entry.sizeBytes,
        mode: entry.mode,
        state: "skipped",
        reason: `larger than ${context.maxCopyBytes} bytes (the toolhost's write limit): copy it by hand as the agent's uid`,
      };
    return {
      relativePath: entry.relativePath,
      source: entry.path,
      dest,
      sizeBytes: entry.sizeBytes,
      mode: entry.mode,
      state: "copy",
      sha256: sha256(readGoFile(entry.path)),
    };
  });
  const pending = plans.filter((plan) => plan.state === "copy");
  if (pending.length === 0) return plans;
  const stats = await context.maintenance.agent(context.agentId).files.stat(
    pending.map((plan) => plan.dest),
    true,
  );
  for (const [index, plan] of pending.entries()) {
    const stat = stats[index];
    if (!stat || "error" in stat || stat.type === "missing") continue;
    if (stat.type === "file" && stat.sha256 === plan.sha256) plan.state = "same";
    else
      Object.assign(plan, {
        state: "skipped",
        reason: `${plan.dest} already exists (a different ${stat.type}); never overwritten`,
      });
  }
  return plans;
}

/** Copies the planned files through the agent's toolhost; a source changed since the plan stops the copy. */
export async function copyFiles(
  plans: FileImport[],
  context: FilesContext,
  report: (line: string) => void,
): Promise<number> {
  const pending = plans.filter((plan) => plan.state === "copy");
  const files = context.maintenance.agent(context.agentId).files;
  for (const [index, plan] of pending.entries()) {
    const bytes = readGoFile(plan.source);
    if (sha256(bytes) !== plan.sha256)
      throw new Error(`${plan.source} changed since the plan; run laoding import go again`);
    await files.writeFile(plan.dest, bytes, { mode: plan.mode });
    report(`  [${index + 1}/${pending.length}] ${plan.relativePath} -> ${plan.dest}`);
  }
  return pending.length;
}
