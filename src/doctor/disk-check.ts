/** Free space on the workspace's file system: the database, logs and agents' files all grow there. */
import type { StatsFs } from "node:fs";
import { failed, passed, type CheckResult } from "./check-result.js";

/** Below this the database's WAL and a day of logs may no longer fit. */
export const MIN_FREE_DISK_BYTES = 500 * 1024 * 1024;
/** Below this few files can be created, whatever the free bytes. */
export const MIN_FREE_INODES = 10_000;

export function checkDisk(
  workspaceDir: string,
  statfs: (path: string) => Pick<StatsFs, "bavail" | "bsize" | "ffree" | "files">,
): CheckResult {
  const title = `disk space at ${workspaceDir}`;
  let stats: Pick<StatsFs, "bavail" | "bsize" | "ffree" | "files">;
  try {
    stats = statfs(workspaceDir);
  } catch (error) {
    return failed(
      "disk",
      title,
      `cannot read the file system's free space: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
      `Check that ${workspaceDir} exists (laoding init --workspace ${workspaceDir})`,
    );
  }
  const freeBytes = stats.bavail * stats.bsize;
  const free = `${formatBytes(freeBytes)} free`;
  if (freeBytes < MIN_FREE_DISK_BYTES) {
    return failed(
      "disk",
      title,
      `only ${free} (the doctor wants at least ${formatBytes(MIN_FREE_DISK_BYTES)})`,
      `Free space on the file system of ${workspaceDir} (old logs: laoding logs; du -sh ${workspaceDir}/* shows what is large), or move the workspace to a larger disk`,
    );
  }
  // Some file systems report no inode counts (files 0): nothing to compare then.
  if (stats.files > 0 && stats.ffree < MIN_FREE_INODES) {
    return failed(
      "disk",
      title,
      `only ${stats.ffree} inodes free: few new files can be created`,
      `Remove unneeded small files on the file system of ${workspaceDir} (find ${workspaceDir} -xdev -type f | wc -l counts them)`,
    );
  }
  return passed("disk", `${title} (${free})`);
}

function formatBytes(bytes: number): string {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(unit === 0 ? 0 : 1)} ${units[unit]}`;
}
