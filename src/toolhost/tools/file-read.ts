import { closeSync, readSync } from "node:fs";
import { z } from "zod";
import { defineTool, READS_ONLY } from "./define-tool.js";
import { openInsideForRead } from "./file-access.js";

const CHUNK_BYTES = 64 * 1024;
const BINARY_SNIFF_BYTES = 8 * 1024;
const NEWLINE = 0x0a;
/**
 * The first chunk of every read lands here: execute is synchronous from read to string,
 * so no two calls ever hold it at once, and a read allocates no buffer of its own.
 */
const firstChunk = Buffer.allocUnsafe(CHUNK_BYTES);

export const fileReadTool = defineTool({
  name: "file.read",
  description:
    "Read a text file. Optional 1-based line `offset` and line `limit` page through large files. Output is capped; binary files are reported, not dumped.",
  hints: READS_ONLY,
  inputSchema: z
    .object({
      path: z.string().describe("File path, relative to the working folder or absolute"),
      offset: z.number().int().min(1).optional().describe("First line to return (1-based)"),
      limit: z.number().int().min(1).max(100_000).optional().describe("Number of lines to return"),
    })
    .strict(),
  execute(args, context) {
    const { fd, stats } = openInsideForRead(context.sandbox, args.path, context.cwd);
    try {
      const maxBytes = context.limits.outputMaxBytes;
      // One byte more than the file: a short first read says it all fitted, with no second read to find the end.
      const first = firstChunk.subarray(0, Math.min(CHUNK_BYTES, stats.size + 1));
      const firstCount = readSync(fd, first, 0, first.length, 0);
      if (first.subarray(0, Math.min(firstCount, BINARY_SNIFF_BYTES)).includes(0)) {
        return { output: `${args.path} is a binary file of ${stats.size} bytes; not shown`, truncated: false };
      }
      const whole =
        firstCount < first.length && args.offset === undefined && args.limit === undefined && firstCount <= maxBytes;
      const { kept, truncated } = whole
        ? { kept: first.subarray(0, firstCount), truncated: false }
        : collectLines(
            fd,
            first.subarray(0, firstCount),
            firstCount < first.length,
            args.offset ?? 1,
            args.limit,
            maxBytes,
          );
      let output = kept.toString("utf8");
      if (output.endsWith("\uFFFD")) output = output.slice(0, -1);
      if (truncated) output += `\n…[truncated at ${maxBytes} bytes of ${stats.size}; read on with offset/limit]`;
      else if (output === "" && args.offset !== undefined) output = `(no lines at offset ${args.offset})`;
      return { output, truncated };
    } finally {
      closeSync(fd);
    }
  },
});

/**
 * Streams the file in chunks and keeps lines [startLine, startLine + limit) up to
 * `maxBytes`: memory stays bounded by the cap whatever the file's size.
 */
function collectLines(
  fd: number,
  first: Buffer,
  firstIsAll: boolean,
  startLine: number,
  limit: number | undefined,
  maxBytes: number,
): { kept: Buffer; truncated: boolean } {
  const endLine = limit === undefined ? Number.POSITIVE_INFINITY : startLine + limit - 1;
  const kept: Buffer[] = [];
  let keptBytes = 0;
  let line = 1;
  let position = 0;
  let chunk = first;
  while (chunk.length > 0) {
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(NEWLINE, start);
      const end = newline < 0 ? chunk.length : newline + 1;
      if (line >= startLine) {
        const piece = chunk.subarray(start, end);
        if (keptBytes + piece.length > maxBytes) {
          kept.push(piece.subarray(0, maxBytes - keptBytes));
          return { kept: Buffer.concat(kept), truncated: true };
        }
        kept.push(piece);
        keptBytes += piece.length;
      }
      if (newline < 0) break;
      line += 1;
      if (line > endLine) return { kept: Buffer.concat(kept), truncated: false };
      start = end;
    }
    if (position === 0 && firstIsAll) break;
    position += chunk.length;
    const next = Buffer.allocUnsafe(CHUNK_BYTES);
    chunk = next.subarray(0, readSync(fd, next, 0, next.length, position));
  }
  return { kept: Buffer.concat(kept), truncated: false };
}
