/**
 * Tools an operator's maintenance child serves (the admin API, `laoding share`), never a
 * chat agent's child: the start-up message turns them on. They run inside the agent's
 * toolhost, with the agent's authority and behind the same path sandbox, so the bot's own
 * process never opens a path inside an agent's tree (DECISIONS.md, boundary). Answers are
 * JSON, and file bytes travel as base64 in pages that fit the output budget.
 */
import { createHash } from "node:crypto";
import { closeSync, lstatSync, mkdirSync, readlinkSync, readSync, renameSync, unlinkSync, type Stats } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { z } from "zod";
import { isLibraryDocName, parseLibraryDoc } from "../../knowledge/library/library-doc.js";
import { ensureFresh, listLibraryDocs, readHead } from "../../knowledge/library/library-index.js";
import { isWithin } from "../sandbox/path-sandbox.js";
import { ToolError } from "../tool-error.js";
import { defineTool, READS_ONLY, type Tool, type ToolContext } from "./define-tool.js";
import { atomicWrite, fsError, lstatOrUndefined, openForRead } from "./file-access.js";
import type { OperatorDoc, OperatorDocsPage, OperatorReadPage, OperatorStat } from "./operator-answers.js";
import type { LibrarySettings } from "./library-tools.js";

/** Room left in an answer for the JSON around a base64 page. */
const ENVELOPE_BYTES = 256;
const MAX_STAT_PATHS = 200;
const MAX_DOCS_PAGE = 200;

export type { OperatorDoc, OperatorDocsPage, OperatorReadPage, OperatorStat } from "./operator-answers.js";

/** A folder the path must lie in, compared by segments after realpath (the library for document calls). */
const within = z.string().min(1).describe("Folder the path must lie in, after links are resolved");

const json = (value: unknown) => ({ output: JSON.stringify(value), truncated: false });

export function createOperatorTools(library: LibrarySettings | undefined): Tool[] {
  const read = defineTool({
    name: "operator.read",
    description:
      "Read a file's bytes as base64, one page at a time (offset, then the answer's next); a file over maxBytes is refused before it is read.",
    hints: READS_ONLY,
    inputSchema: z
      .object({
        path: z.string(),
        offset: z.number().int().min(0).optional(),
        within: within.optional(),
        maxBytes: z
          .number()
          .int()
          .min(0)
          .optional()
          .describe("Refuse a file larger than this (its size as opened, so every page checks the file it reads)"),
      })
      .strict(),
    async execute(args, context) {
      const resolved = context.sandbox.resolve(args.path, context.cwd, "read");
      assertWithin(context, args.within, resolved.realPath, args.path);
      const { fd, stats } = openForRead(context.sandbox, resolved.realPath, args.path);
      try {
        assertWithin(context, args.within, readlinkSync(`/proc/self/fd/${fd}`), args.path);
        // The size of the file this call opened: one swapped in after a caller's stat, or grown between pages, is caught too.
        if (args.maxBytes !== undefined && stats.size > args.maxBytes)
          throw new ToolError("FILE_TOO_LARGE", `${args.path} is ${stats.size} bytes; the limit is ${args.maxBytes}`);
        const offset = Math.min(args.offset ?? 0, stats.size);
        const pageBytes = Math.max(3, Math.floor((context.limits.outputMaxBytes - ENVELOPE_BYTES) / 4) * 3);
        const buffer = Buffer.alloc(Math.min(pageBytes, stats.size - offset));
        let length = 0;
        while (length < buffer.length) {
          const count = readSync(fd, buffer, length, buffer.length - length, offset + length);
          if (count === 0) break;
          length += count;
        }
        const end = offset + length;
        const page: OperatorReadPage = {
          size: stats.size,
          offset,
          next: end < stats.size && length > 0 ? end : null,
          base64: buffer.subarray(0, length).toString("base64"),
        };
        return json(page);
      } finally {
        closeSync(fd);
      }
    },
  });

  const write = defineTool({
    name: "operator.write",
    description:
      "Create or replace a file atomically from base64 bytes, with an exact mode when given. Never writes through a link.",
    hints: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    inputSchema: z
      .object({
        path: z.string(),
        base64: z.string(),
        mode: z
          .number()
          .int()
          .min(0)
          .max(0o777)
          .describe("Permission bits only: no setuid, setgid or sticky")
          .optional(),
        within: within.optional(),
      })
      .strict(),
    async execute(args, context) {
      const bytes = Buffer.from(args.base64, "base64");
      if (bytes.length > context.limits.writeMaxBytes)
        throw new ToolError(
          "FILE_TOO_LARGE",
          `content is ${bytes.length} bytes; the maximum is ${context.limits.writeMaxBytes}`,
        );
      const resolved = context.sandbox.resolve(args.path, context.cwd, "write");
      assertWithin(context, args.within, resolved.realPath, args.path);
      const created = atomicWrite(resolved.realPath, bytes, args.path, args.mode);
      return { output: `${created ? "created" : "replaced"} ${args.path} (${bytes.length} bytes)`, truncated: false };
    },
  });

  const remove = defineTool({
    name: "operator.delete",
    description: "Delete one regular file (never a link, a folder or a device).",
    // Not idempotent for a retry: a second delete would answer "not found" for a file the first one removed.
    hints: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    inputSchema: z.object({ path: z.string(), within: within.optional() }).strict(),
    async execute(args, context) {
      // The name itself is deleted, never what a link points to: resolve the folder, not the name.
      const absolute = resolve(context.cwd, args.path);
      const target = join(
        context.sandbox.resolve(dirname(absolute), context.cwd, "write").realPath,
        basename(absolute),
      );
      context.sandbox.assertInside(target, args.path);
      assertWithin(context, args.within, target, args.path);
      const stats = lstatOrUndefined(target);
      if (!stats) throw new ToolError("PATH_NOT_FOUND", `${args.path} does not exist`);
      if (stats.isSymbolicLink())
        throw new ToolError("PATH_NOT_ALLOWED", `${args.path} is a link; only regular files are deleted`);
      if (!stats.isFile()) throw new ToolError("PATH_NOT_ALLOWED", `${args.path} is not a regular file`);
      try {
        unlinkSync(target);
      } catch (error) {
        throw fsError(error, args.path);
      }
      return { output: `deleted ${args.path}`, truncated: false };
    },
  });

  const move = defineTool({
    name: "operator.move",
    description:
      "Move a file or folder to a path that does not exist yet (same file system); missing parent folders are created.",
    hints: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    inputSchema: z.object({ from: z.string(), to: z.string() }).strict(),
    async execute(args, context) {
      const from = context.sandbox.resolve(args.from, context.cwd, "write");
      if (!lstatOrUndefined(from.realPath)) throw new ToolError("PATH_NOT_FOUND", `${args.from} does not exist`);
      const to = context.sandbox.resolve(args.to, context.cwd, "write");
      if (to.exists || lstatOrUndefined(to.realPath)) throw new ToolError("INVALID_ARGS", `${args.to} already exists`);
      try {
        mkdirSync(dirname(to.realPath), { recursive: true });
        // The parent may have been created just now: check its real path again.
        context.sandbox.resolve(dirname(args.to), context.cwd, "write");
        renameSync(from.realPath, to.realPath);
      } catch (error) {
        throw fsError(error, args.from);
      }
      return { output: `moved ${args.from} to ${args.to}`, truncated: false };
    },
  });

  const stat = defineTool({
    name: "operator.stat",
    description:
      "Type, size, mode and modification time of up to 200 paths (links are not followed), with each file's sha256 when asked.",
    hints: READS_ONLY,
    inputSchema: z
      .object({ paths: z.array(z.string()).min(1).max(MAX_STAT_PATHS), hash: z.boolean().optional() })
      .strict(),
    async execute(args, context) {
      const entries: OperatorStat[] = args.paths.map((path) => statOne(path, args.hash === true, context));
      return json(entries);
    },
  });

  if (!library) return [read, write, remove, move, stat];
  const docs = defineTool({
    name: "operator.library-docs",
    description:
      "Refresh the experience library's index, then one page of its documents with their frontmatter fields, size and modification time.",
    hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    inputSchema: z
      .object({
        offset: z.number().int().min(0).optional(),
        limit: z.number().int().min(1).max(MAX_DOCS_PAGE).optional(),
      })
      .strict(),
    async execute(args, context) {
      const dir = context.sandbox.resolve(library.dir, context.cwd, "write").realPath;
      ensureFresh(dir, library);
      const names = listLibraryDocs(dir);
      const offset = args.offset ?? 0;
      const page = names.slice(offset, offset + (args.limit ?? 50)).flatMap((fileName): OperatorDoc[] => {
        const path = join(dir, fileName);
        const stats = lstatOrUndefined(path);
        const head = stats?.isFile() ? readHead(path) : undefined;
        if (!stats || head === undefined || !isLibraryDocName(fileName)) return [];
        const { file, ...entry } = parseLibraryDoc(fileName, head);
        return [{ fileName: file, ...entry, sizeBytes: stats.size, updatedAt: stats.mtime.toISOString() }];
      });
      const answer: OperatorDocsPage = { total: names.length, docs: page };
      return json(answer);
    },
  });
  return [read, write, remove, move, stat, docs];
}

function assertWithin(context: ToolContext, folder: string | undefined, realPath: string, input: string): void {
  if (folder === undefined) return;
  const root = context.sandbox.resolve(folder, context.cwd, "read").realPath;
  if (!isWithin(root, realPath))
    throw new ToolError("PATH_NOT_ALLOWED", `${input} lies outside ${folder} (through a link)`);
}

function statOne(path: string, hash: boolean, context: ToolContext): OperatorStat {
  // The parent is resolved (links on the way followed and checked); the last name is not followed.
  const absolute = resolve(context.cwd, path);
  let realPath: string;
  try {
    realPath = join(context.sandbox.resolve(dirname(absolute), context.cwd, "read").realPath, basename(absolute));
    context.sandbox.assertInside(realPath, path);
  } catch (error) {
    return { path, error: error instanceof ToolError ? error.code : "INTERNAL" };
  }
  let stats: Stats;
  try {
    stats = lstatSync(realPath);
  } catch {
    return { path, type: "missing" };
  }
  const type = stats.isFile() ? "file" : stats.isDirectory() ? "dir" : stats.isSymbolicLink() ? "link" : "other";
  const base = { path, type, sizeBytes: stats.size, mtimeMs: stats.mtimeMs, mode: stats.mode & 0o7777 } as const;
  if (!hash || type !== "file") return base;
  const { fd } = openForRead(context.sandbox, realPath, path);
  try {
    const digest = createHash("sha256");
    const buffer = Buffer.alloc(1024 * 1024);
    for (let position = 0; ; ) {
      const count = readSync(fd, buffer, 0, buffer.length, position);
      if (count === 0) break;
      digest.update(buffer.subarray(0, count));
      position += count;
    }
    return { ...base, sha256: digest.digest("hex") };
  } finally {
    closeSync(fd);
  }
}
