import { closeSync, readSync } from "node:fs";
import { z } from "zod";
import { defineTool } from "./define-tool.js";
import { openForRead } from "./file-access.js";

const CHUNK_BYTES = 64 * 1024;
const BINARY_SNIFF_BYTES = 8 * 1024;

export const fileReadTool = defineTool({
  name: "file.read",
  description:
    "Read a text file. Optional 1-based line `offset` and line `limit` page through large files. Output is capped; binary files are reported, not dumped.",
  readOnly: true,
  inputSchema: z
    .object({
      path: z.string().describe("File path, relative to the working folder or absolute"),
      offset: z.number().int().min(1).optional().describe("First line to return (1-based)"),
      limit: z.number().int().min(1).max(100_000).optional().describe("Number of lines to return"),
    })
    .strict(),
  async execute(args, context) {
    const resolved = context.sandbox.resolve(args.path, context.cwd, "read");
    const { fd, stats } = openForRead(context.sandbox, resolved.realPath, args.path);
    try {
      const maxBytes = context.limits.outputMaxBytes;
      const first = Buffer.alloc(Math.min(CHUNK_BYTES, Math.max(stats.size, 1)));
      const firstRead = readSync(fd, first, 0, first.length, 0);
      if (first.subarray(0, Math.min(firstRead, BINARY_SNIFF_BYTES)).includes(0)) {
        return { output: `${args.path} is a binary file of ${stats.size} bytes; not shown`, truncated: false };
      }
      const startLine = args.offset ?? 1;
      const endLine = args.limit === undefined ? Number.POSITIVE_INFINITY : startLine + args.limit - 1;
      const kept: Buffer[] = [];
      let keptBytes = 0;
      let line = 1;
      let truncated = false;
      let position = 0;
      let chunk = first.subarray(0, firstRead);
      // Stream the file: memory stays bounded by the output cap whatever the file's size.
      scan: while (chunk.length > 0) {
        let start = 0;
        for (let index = 0; index <= chunk.length; index += 1) {
          const atEnd = index === chunk.length;
          if (!atEnd && chunk[index] !== 0x0a) continue;
          const piece = chunk.subarray(start, atEnd ? index : index + 1);
          if (line >= startLine && line <= endLine && piece.length > 0) {
            if (keptBytes + piece.length > maxBytes) {
              kept.push(piece.subarray(0, maxBytes - keptBytes));
              keptBytes = maxBytes;
              truncated = true;
              break scan;
            }
            kept.push(piece);
            keptBytes += piece.length;
          }
          if (atEnd) break;
          line += 1;
          start = index + 1;
          if (line > endLine) break scan;
        }
        position += chunk.length;
        const next = Buffer.alloc(CHUNK_BYTES);
        const count = readSync(fd, next, 0, next.length, position);
        chunk = next.subarray(0, count);
      }
      let output = Buffer.concat(kept).toString("utf8").replace(/\uFFFD$/, "");
      if (truncated) output += `\n…[truncated at ${maxBytes} bytes of ${stats.size}; read on with offset/limit]`;
      return { output, truncated };
    } finally {
      closeSync(fd);
    }
  },
});
