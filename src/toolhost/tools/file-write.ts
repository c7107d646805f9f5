import { z } from "zod";
import { ToolError } from "../tool-error.js";
import { defineTool } from "./define-tool.js";
import { atomicWrite } from "./file-access.js";

export const fileWriteTool = defineTool({
  name: "file.write",
  description:
    "Create or replace a text file (atomically). Missing parent folders are created. Never writes through a link.",
  // Overwrites what was there; writing the same content twice leaves the same file.
  hints: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  inputSchema: z.object({ path: z.string(), content: z.string() }).strict(),
  execute(args, context) {
    const bytes = Buffer.byteLength(args.content, "utf8");
    if (bytes > context.limits.writeMaxBytes) {
      throw new ToolError(
        "FILE_TOO_LARGE",
        `content is ${bytes} bytes; the maximum is ${context.limits.writeMaxBytes}`,
      );
    }
    const resolved = context.sandbox.resolve(args.path, context.cwd, "write");
    const created = atomicWrite(resolved.realPath, args.content, args.path);
    return { output: `${created ? "created" : "replaced"} ${args.path} (${bytes} bytes)`, truncated: false };
  },
});
