/**
 * `laoding share apply`: refuses when the plan has conflicts (nothing written), then
 * writes the backup, then copies (never moves) each missing file into the agent's own
 * folder through the agent's toolhost, with the source's mode. A file already there with
 * the same hash and mode is left alone, so a second run copies nothing.
 */
import type { MaintenancePool } from "../runtime/library-maintenance.js";
import { PinnedReadError } from "../workspace/descriptor-walk.js";
import { octal, readLegacyFile, sha256, type PlannedCopy, type SharePlan } from "./share-plan.js";

export type ApplyResult = { backup: string; copied: number; unchanged: number };

export class ShareConflictError extends Error {
  override readonly name = "ShareConflictError";
}

export async function applyShare(
  plan: SharePlan,
  options: { maintenance: MaintenancePool; backupsDir: string; now: Date; report: (line: string) => void },
): Promise<ApplyResult> {
  if (plan.conflicts.length > 0) {
    throw new ShareConflictError(
      `nothing was copied: the plan has ${plan.conflicts.length} conflict(s):\n  - ${plan.conflicts.join("\n  - ")}\nResolve them (move the file aside, or change the mapping's "to"), then run plan again`,
    );
  }
  // tar is loaded only by the command that backs up.
  const { writeShareBackup } = await import("./share-backup.js");
  const backup = await writeShareBackup(plan.shareDir, options.backupsDir, options.now);
  options.report(`backup written: ${backup}`);
  let copied = 0;
  let unchanged = 0;
  const total = plan.copies.length;
  for (const [index, copy] of plan.copies.entries()) {
    const position = `[${index + 1}/${total}]`;
    if (copy.state === "same") {
      unchanged += 1;
      options.report(`${position} already there: ${copy.dest}`);
      continue;
    }
    const bytes = copy.content ?? readAgain(plan.shareDir, copy);
    // The source may have changed since the plan: copy what was planned or stop.
    if (sha256(bytes) !== copy.sha256)
      throw new ShareConflictError(`${copy.source} changed since the plan was made; run apply again`);
    await options.maintenance.agent(copy.agentId).files.writeFile(copy.dest, bytes, { mode: copy.mode });
    copied += 1;
    options.report(
      `${position} copied ${copy.source} -> ${copy.dest} (agent ${copy.agentId}, ${bytes.length} bytes, mode ${octal(copy.mode)})`,
    );
  }
  return { backup, copied, unchanged };
}

/** A legacy file read again by the plan's walk: a link put on its way since stops apply. */
function readAgain(shareDir: string, copy: PlannedCopy): Buffer {
  if (copy.inShare === undefined)
    throw new Error(`${copy.source}: the plan has neither its bytes nor its place in the share`);
  try {
    return readLegacyFile(shareDir, copy.inShare);
  } catch (error) {
    if (error instanceof PinnedReadError)
      throw new ShareConflictError(`${error.message}; nothing more was copied, run plan again`);
    throw error;
  }
}
