import { closeSync, readFileSync } from "node:fs";
import { z } from "zod";
import { ToolError } from "../tool-error.js";
import { defineTool } from "./define-tool.js";
import { atomicWrite, openForRead } from "./file-access.js";

export const fileEditTool = defineTool({
  name: "file.edit",
  description:
    "Replace an exact string in a file. `old_string` must match exactly once unless `replace_all` is true. Reports how many occurrences were replaced.",
  hints: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  inputSchema: z
    .object({
      path: z.string(),
      old_string: z.string().min(1),
      new_string: z.string(),
      replace_all: z.boolean().optional(),
    })
    .strict(),
  execute(args, context) {
    const resolved = context.sandbox.resolve(args.path, context.cwd, "write");
    const { fd, stats } = openForRead(context.sandbox, resolved.realPath, args.path);
    let text: string;
    try {
      if (stats.size > context.limits.writeMaxBytes) {
        throw new ToolError(
          "FILE_TOO_LARGE",
          `${args.path} is ${stats.size} bytes; file.edit handles at most ${context.limits.writeMaxBytes}`,
        );
      }
      text = readFileSync(fd, "utf8");
    } finally {
      closeSync(fd);
    }
    const count = text.split(args.old_string).length - 1;
    if (count === 0) throw new ToolError("INVALID_ARGS", `old_string was not found in ${args.path}`);
    if (count > 1 && !args.replace_all) {
      throw new ToolError(
        "INVALID_ARGS",
        `old_string matches ${count} times in ${args.path}; add surrounding text to make it unique or set replace_all`,
      );
    }
    const updated = args.replace_all
      ? text.split(args.old_string).join(args.new_string)
      : text.replace(args.old_string, () => args.new_string);
    atomicWrite(resolved.realPath, updated, args.path);
    return { output: `replaced ${count} occurrence${count === 1 ? "" : "s"} in ${args.path}`, truncated: false };
  },
});
