/**
 * `laoding share rollback`: brings the share back as a backup archive holds it.
 *
 * The plan (the default) reads the archive and the share as it is now and says what would
 * change; it writes nothing. `apply` refuses while the bot runs (it stops nothing itself),
 * refuses an archive with an unsafe entry (archive-manifest.ts), and otherwise extracts
 * into a fresh root-only folder beside the share, checks the extracted tree entry by entry
 * against the archive, and only then swaps: the current share is renamed aside as
 * `<share>.migrated-<time>` (never deleted) and the restored one takes its place. A share
 * that already matches the archive is left alone, so a second rollback changes nothing.
 *
 * Like the backup, reading the current share is the one step that reads agents' trees as
 * the operator; it walks by descriptor and never follows a link (tree-manifest.ts), while
 * the bot (and so every agent's toolhost) is stopped.
 */
import { mkdtempSync, readdirSync, renameSync, rmSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { extract } from "tar";
import { runningBotPid } from "../runtime/bot-pid-file.js";
import { readArchiveManifest } from "./archive-manifest.js";
import { forgetMovesSince, shareMovesFile } from "./share-moves.js";
import { compareManifests, readTreeManifest, type ManifestDifference, type TreeManifest } from "./tree-manifest.js";

export class RollbackError extends Error {
  override readonly name = "RollbackError";
}

export type RollbackPlan = {
  archive: string;
  shareDir: string;
  entries: number;
  /** How the share now differs from the archive; empty when the rollback has nothing to do. */
  differences: ManifestDifference[];
  /** Per agent, the entries under `agents/<A>/` that exist now but not in the archive: set aside, not restored. */
  agentCopies: Map<string, number>;
};

/** The archive to restore: the one named, or the newest `share-*.tar.gz` in the backups folder. */
export function chooseArchive(backupsDir: string, named: string | undefined): string {
  if (named !== undefined) {
    if (!statOrUndefined(named)?.isFile())
      throw new RollbackError(`the archive ${named} does not exist or is not a file`);
    return named;
  }
  let names: string[];
  try {
    names = readdirSync(backupsDir);
  } catch {
    names = [];
  }
  // The names carry the apply's time in ISO order, so the last sorted is the newest.
  const newest = names
    .filter((name) => /^share-.*\.tar\.gz$/.test(name))
    .sort()
    .at(-1);
  if (newest === undefined)
    throw new RollbackError(`no backup in ${backupsDir} (share apply writes one); name one with --archive FILE`);
  return join(backupsDir, newest);
}

export async function planRollback(
  archive: string,
  shareDir: string,
): Promise<RollbackPlan & { manifest: TreeManifest }> {
  const { manifest, refused } = await readArchiveManifest(archive, basename(shareDir)).catch((error: unknown) => {
    throw new RollbackError(`cannot read the archive ${archive}: ${(error as Error).message}`);
  });
  if (refused.length > 0) {
    throw new RollbackError(
      `the archive ${archive} is refused, nothing was changed: ${refused.length} unsafe entr${refused.length === 1 ? "y" : "ies"}:\n  - ${refused.join("\n  - ")}\nRestore by hand only what you trust (tar -tzvf lists it)`,
    );
  }
  if (!manifest.has(""))
    throw new RollbackError(
      `the archive ${archive} holds no ${basename(shareDir)}/ folder; it is not a backup of this share`,
    );
  const now = readTreeManifest(shareDir) ?? new Map();
  const differences = compareManifests(manifest, now);
  const agentCopies = new Map<string, number>();
  for (const difference of differences) {
    const [top, agentId] = difference.path.split("/");
    if (
      difference.change === "only now" &&
      top === "agents" &&
      agentId !== undefined &&
      difference.path !== `agents/${agentId}`
    )
      agentCopies.set(agentId, (agentCopies.get(agentId) ?? 0) + 1);
  }
  return { archive, shareDir, entries: manifest.size, differences, agentCopies, manifest };
}

export type RollbackResult = { changed: false } | { changed: true; setAside: string; forgottenMoves: number };

export async function applyRollback(options: {
  archive: string;
  shareDir: string;
  dataDir: string;
  now: Date;
}): Promise<RollbackResult> {
  const pid = runningBotPid(options.dataDir);
  if (pid !== undefined)
    throw new RollbackError(
      `the bot is running (pid ${pid}, recorded in ${join(options.dataDir, "bot.pid")}); stop it first: rollback stops nothing itself. Nothing was changed`,
    );
  const plan = await planRollback(options.archive, options.shareDir);
  if (plan.differences.length === 0) return { changed: false };
  const stamp = options.now.toISOString().replace(/[:.]/g, "-");
  const parent = dirname(options.shareDir);
  const name = basename(options.shareDir);
  // Root-only (mkdtemp makes it 0700) until the swap: no agent sees a half-restored share.
  const staging = mkdtempSync(join(parent, `.${name}.rollback-`));
  try {
    await extract({
      file: options.archive,
      cwd: staging,
      preservePaths: false,
      preserveOwner: true,
      strict: true,
      chmod: true,
      processUmask: 0,
      filter: (path) => !path.startsWith("/") && !path.split("/").includes(".."),
    });
    const restored = readTreeManifest(join(staging, name));
    const mismatch =
      restored === undefined
        ? [{ path: "", change: "only in the archive" as const }]
        : compareManifests(plan.manifest, restored);
    if (mismatch.length > 0)
      throw new RollbackError(
        `the extracted share differs from the archive at ${mismatch
          .slice(0, 5)
          .map((entry) => `${entry.path || "."} (${entry.change})`)
          .join(", ")}; nothing was changed`,
      );
    const setAside = join(parent, `${name}.migrated-${stamp}`);
    if (statOrUndefined(options.shareDir) !== undefined) renameSync(options.shareDir, setAside);
    renameSync(join(staging, name), options.shareDir);
    // The moves this archive's apply (and any later one) made are undone: agents stop hearing of them.
    const written = Date.parse(stampOf(options.archive) ?? "") || statSync(options.archive).mtimeMs;
    const forgottenMoves = forgetMovesSince(shareMovesFile(options.dataDir), options.archive, written);
    return { changed: true, setAside, forgottenMoves };
  } finally {
    // Ours alone: what is left in it is the failed extraction (or nothing).
    rmSync(staging, { recursive: true, force: true });
  }
}

/** The apply time in a backup's name (`share-2025-01-02T03-04-05-678Z.tar.gz`), as ISO text. */
function stampOf(archive: string): string | undefined {
  const match = /share-(\d{4}-\d{2}-\d{2})T(\d{2})-(\d{2})-(\d{2})-(\d{3})Z\.tar\.gz$/.exec(basename(archive));
  return match ? `${match[1]}T${match[2]}:${match[3]}:${match[4]}.${match[5]}Z` : undefined;
}

function statOrUndefined(path: string) {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}
