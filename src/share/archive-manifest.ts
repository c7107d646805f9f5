/**
 * What a share backup holds, read without extracting it: the manifest of its entries
 * (as tree-manifest.ts reads a tree, so the two compare), and every entry a restore must
 * refuse: an absolute path, a `..` segment, an entry outside `<share name>/`, a link whose
 * target leaves the share, and kinds the backup never writes (hard links, devices). One
 * such entry refuses the whole archive before anything is moved.
 */
import { createHash } from "node:crypto";
import { posix } from "node:path";
import { list, type ReadEntry } from "tar";
import type { ManifestEntry, TreeManifest } from "./tree-manifest.js";

export type ArchiveManifest = { manifest: TreeManifest; refused: string[] };

/** Reads every entry of `file` (a gzip'd tar), hashing each file's bytes. */
export async function readArchiveManifest(file: string, shareName: string): Promise<ArchiveManifest> {
  const manifest: TreeManifest = new Map();
  const refused: string[] = [];
  const pending: Promise<void>[] = [];
  await list({
    file,
    strict: true,
    onReadEntry(entry: ReadEntry) {
      const path = entry.path;
      const inShare = placeInShare(path, shareName);
      if (typeof inShare === "object") {
        refused.push(`${path}: ${inShare.problem}`);
        entry.resume();
        return;
      }
      const kind = kindOf(entry);
      if (kind === undefined) {
        refused.push(`${path}: a ${entry.type} entry (the backup writes none; restore it by hand if you trust it)`);
        entry.resume();
        return;
      }
      if (kind === "link") {
        const outside = linkLeavesShare(inShare, entry.linkpath ?? "");
        if (outside) refused.push(`${path}: a link to ${entry.linkpath ?? ""}, which ${outside}`);
        manifest.set(inShare, { type: "link", mode: 0, size: 0, linkpath: entry.linkpath ?? "" });
        entry.resume();
        return;
      }
      const base: ManifestEntry = {
        type: kind,
        mode: (entry.mode ?? 0) & 0o7777,
        size: kind === "file" ? entry.size : 0,
      };
      if (kind !== "file") {
        manifest.set(inShare, base);
        entry.resume();
        return;
      }
      const hash = createHash("sha256");
      entry.on("data", (chunk: Buffer) => hash.update(chunk));
      pending.push(
        new Promise((resolve) =>
          entry.on("end", () => {
            manifest.set(inShare, { ...base, sha256: hash.digest("hex") });
            resolve();
          }),
        ),
      );
    },
  });
  await Promise.all(pending);
  return { manifest, refused };
}

/** The entry's path below the share ("" for the share folder itself), or why it is refused. */
function placeInShare(path: string, shareName: string): string | { problem: string } {
  if (path.startsWith("/") || /^[A-Za-z]:/.test(path))
    return { problem: "an absolute path (a restore writes only below the share)" };
  const segments = path.split("/").filter((segment) => segment !== "" && segment !== ".");
  if (segments.includes("..")) return { problem: "a `..` segment (it would write outside the share)" };
  if (segments[0] !== shareName) return { problem: `outside ${shareName}/ (not this share's backup)` };
  return segments.slice(1).join("/");
}

function kindOf(entry: ReadEntry): ManifestEntry["type"] | undefined {
  switch (entry.type) {
    case "File":
    case "OldFile":
    case "ContiguousFile":
      return "file";
    case "Directory":
      return "folder";
    case "SymbolicLink":
      return "link";
    case "FIFO":
      return "fifo";
    default:
      return undefined;
  }
}

/** Why a link at `inShare` pointing to `linkpath` leaves the share, or undefined when it stays inside. */
function linkLeavesShare(inShare: string, linkpath: string): string | undefined {
  if (linkpath === "") return "is empty";
  if (posix.isAbsolute(linkpath)) return "is outside the share (an absolute target)";
  const target = posix.normalize(posix.join(posix.dirname(inShare), linkpath));
  if (target === ".." || target.startsWith("../")) return "leads outside the share";
  return undefined;
}
