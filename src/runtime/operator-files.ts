/**
 * The parent's side of the operator.* tools: typed calls that page file bytes through an
 * agent's maintenance toolhost. A failed call throws OperatorCallError with the tool's
 * error code, so callers map it (PATH_NOT_FOUND to a 404) without reading message text.
 */
import { z } from "zod";
import type { ToolErrorCode, ToolResult } from "../toolhost/protocol.js";
import {
  operatorDocsPageSchema,
  operatorReadPageSchema,
  operatorStatListSchema,
  type OperatorDoc,
  type OperatorDocsPage,
  type OperatorReadPage,
  type OperatorStat,
} from "../toolhost/tools/operator-answers.js";

export class OperatorCallError extends Error {
  override readonly name = "OperatorCallError";
  constructor(
    readonly code: ToolErrorCode,
    readonly tool: string,
    message: string,
  ) {
    super(`${tool}: ${code}: ${message}`);
  }
}

type CallTool = (call: { name: string; args: Record<string, unknown> }) => Promise<ToolResult>;

const STAT_BATCH = 200;
const DOCS_PAGE = 100;

export type OperatorFiles = ReturnType<typeof operatorFiles>;

export function operatorFiles(callTool: CallTool) {
  const call = async (name: string, args: Record<string, unknown>): Promise<string> => {
    const result = await callTool({ name, args });
    if (!result.ok) throw new OperatorCallError(result.error.code, result.error.tool, result.error.reason);
    return result.output;
  };
  const parse = <T>(schema: z.ZodType<T>, name: string, text: string): T => {
    const parsed = schema.safeParse(JSON.parse(text));
    if (!parsed.success) throw new OperatorCallError("INTERNAL", name, `unexpected answer: ${parsed.error.message}`);
    return parsed.data;
  };
  return {
    /**
     * `within`: a folder the file must lie in after links are resolved (the child checks).
     * `maxBytes`: the child refuses a larger file (FILE_TOO_LARGE) by the size of the file it
     * opened, on every page, so a file swapped in after a stat is refused too.
     */
    async readFile(path: string, within?: string, maxBytes?: number): Promise<Buffer> {
      const chunks: Buffer[] = [];
      for (let offset: number | null = 0; offset !== null; ) {
        const args = { path, offset, ...(within ? { within } : {}), ...(maxBytes !== undefined ? { maxBytes } : {}) };
        const page: OperatorReadPage = parse(
          operatorReadPageSchema,
          "operator.read",
          await call("operator.read", args),
        );
        chunks.push(Buffer.from(page.base64, "base64"));
        offset = page.next;
      }
      return Buffer.concat(chunks);
    },
    writeFile: (path: string, bytes: Buffer, options: { mode?: number; within?: string } = {}): Promise<string> =>
      call("operator.write", { path, base64: bytes.toString("base64"), ...options }),
    deleteFile: (path: string, within?: string): Promise<string> =>
      call("operator.delete", { path, ...(within ? { within } : {}) }),
    move: (from: string, to: string): Promise<string> => call("operator.move", { from, to }),
    async stat(paths: string[], hash = false): Promise<OperatorStat[]> {
      const results: OperatorStat[] = [];
      for (let start = 0; start < paths.length; start += STAT_BATCH) {
        results.push(
          ...parse(
            operatorStatListSchema,
            "operator.stat",
            await call("operator.stat", { paths: paths.slice(start, start + STAT_BATCH), hash }),
          ),
        );
      }
      return results;
    },
    /** How many documents the library holds (its index refreshed first). */
    async libraryCount(): Promise<number> {
      return parse(
        operatorDocsPageSchema,
        "operator.library-docs",
        await call("operator.library-docs", { offset: 0, limit: 1 }),
      ).total;
    },
    async libraryDocs(): Promise<OperatorDoc[]> {
      const docs: OperatorDoc[] = [];
      for (let offset = 0; ; offset += DOCS_PAGE) {
        const page: OperatorDocsPage = parse(
          operatorDocsPageSchema,
          "operator.library-docs",
          await call("operator.library-docs", { offset, limit: DOCS_PAGE }),
        );
        docs.push(...page.docs);
        if (offset + DOCS_PAGE >= page.total) return docs;
      }
    },
    /** A tool call whose output is plain text (library.index, file.list). */
    call,
  };
}
