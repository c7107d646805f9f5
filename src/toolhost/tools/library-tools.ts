/**
 * The experience library's tools, served only when the library is enabled for the agent:
 * `library.search` (ranked index lines), `library.index` (refresh or rebuild INDEX.md),
 * and the refresh that follows a successful `file.write` / `file.edit` inside the library,
 * so the index shows a new document at once. They only ever touch the one library folder
 * the start-up message names: the agent's own. All of them share the child's keeper of
 * that library (library-keeper.ts): an in-memory index kept in step with the folder.
 */
import { mkdirSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { INDEX_FILE } from "../../knowledge/library/library-doc.js";
import type { IndexResult, LibraryLocale } from "../../knowledge/library/library-index.js";
import { LibraryKeeper } from "../../knowledge/library/library-keeper.js";
import { isWithin } from "../sandbox/path-sandbox.js";
import { ToolError } from "../tool-error.js";
import { defineTool, READS_ONLY, type Tool, type ToolContext } from "./define-tool.js";
import { headTail } from "./truncate-output.js";

export type LibrarySettings = { dir: string; locale: LibraryLocale };

export const DEFAULT_SEARCH_LIMIT = 10;

/** One keeper per library folder and locale in this process, shared by its tools. */
const keepers = new Map<string, LibraryKeeper>();

/** The keeper of the library at real path `dir` (made on first use). */
export function libraryKeeper(dir: string, locale: LibraryLocale): LibraryKeeper {
  const key = `${locale}:${dir}`;
  let keeper = keepers.get(key);
  if (keeper === undefined || keeper.isClosed) {
    keeper = new LibraryKeeper({ dir, locale });
    keepers.set(key, keeper);
  }
  return keeper;
}

/**
 * Brings the library's index up to date in the background, never holding the child's
 * thread for long (the keeper works in slices): for the session setup, which today runs
 * the stateless ensureFresh (a check of every file, a regeneration when stale) on the
 * child's thread. A failure waits for the next library call, which reports it.
 */
export function refreshLibraryInBackground(library: LibrarySettings): void {
  let dir: string;
  try {
    dir = realpathSync(library.dir);
  } catch {
    return;
  }
  libraryKeeper(dir, library.locale)
    .refresh()
    .catch(() => undefined);
}

export function createLibraryTools(library: LibrarySettings): Tool[] {
  const search = defineTool({
    name: "library.search",
    description:
      "Search the team experience library (your team's notes from past work) by title, keywords, summary and file name. Returns ranked INDEX.md lines `file | title | keywords | summary | verified`; read the hits in full with file.read (they are in the library folder).",
    hints: READS_ONLY,
    inputSchema: z
      .object({
        query: z.string().trim().min(1).max(200).describe("Words to look for, Chinese or English"),
        limit: z
          .number()
          .int()
          .min(1)
          .max(50)
          .optional()
          .describe(`Most hits to return (default ${DEFAULT_SEARCH_LIMIT})`),
      })
      .strict(),
    async execute(args, context) {
      const dir = libraryDir(library);
      const { hits, count } = await libraryKeeper(dir, library.locale).search(
        args.query,
        args.limit ?? DEFAULT_SEARCH_LIMIT,
      );
      if (hits.length === 0)
        return {
          output: `no document matches "${args.query}" (${count} documents in ${dir}/${INDEX_FILE})`,
          truncated: false,
        };
      const { text, truncated } = headTail(
        [`${hits.length} of ${count} documents match; folder ${dir}`, ...hits.map((hit) => hit.line)].join("\n"),
        context.limits.outputMaxBytes,
      );
      return { output: text, truncated };
    },
  });
  const index = defineTool({
    name: "library.index",
    description: `Regenerate the team experience library's ${INDEX_FILE} if it is out of date (or always, with rebuild: true) and report how many documents it lists. Read or grep ${INDEX_FILE} itself for its lines.`,
    // Writes only INDEX.md, from the documents: the same every time.
    hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    inputSchema: z.object({ rebuild: z.boolean().optional() }).strict(),
    async execute(args) {
      const dir = libraryDir(library);
      const result = await libraryKeeper(dir, library.locale).refresh({ rebuild: args.rebuild === true });
      return { output: describeRefresh(join(dir, INDEX_FILE), result), truncated: false };
    },
  });
  return [search, index];
}

/**
 * Wraps file.write / file.edit: after a successful write inside the library, the written
 * document is checked and INDEX.md rewritten before the result goes back. A hand edit of
 * INDEX.md itself is replaced by a rebuild.
 */
export function withLibraryRefresh(tool: Tool, library: LibrarySettings): Tool {
  return {
    ...tool,
    async execute(args, context) {
      const result = await tool.execute(args, context);
      const written = writtenPath(args, context);
      const dir = libraryDir(library);
      if (written === undefined || !isWithin(dir, written)) return result;
      try {
        const keeper = libraryKeeper(dir, library.locale);
        const since = keeper.noteWritten(written);
        const refreshed = await keeper.refresh({ rewrite: written === join(dir, INDEX_FILE), since });
        const note =
          refreshed.reason === "rebuild"
            ? `${INDEX_FILE} is generated: your edit was replaced by a rebuild`
            : `library index updated (${refreshed.count} documents)`;
        return {
          ...result,
          output: `${result.output}; ${refreshed.regenerated ? note : `library index up to date (${refreshed.count} documents)`}`,
        };
      } catch (error) {
        return {
          ...result,
          output: `${result.output}; the library index could not be refreshed: ${(error as Error).message}`,
        };
      }
    },
  };
}

function writtenPath(args: unknown, context: ToolContext): string | undefined {
  const path = (args as { path?: unknown }).path;
  if (typeof path !== "string") return undefined;
  try {
    return context.sandbox.resolve(path, context.cwd, "read").realPath;
  } catch {
    return undefined;
  }
}

/** The library's real path; created on first use when the agent may create it. */
function libraryDir(library: LibrarySettings): string {
  try {
    mkdirSync(library.dir, { recursive: true });
    return realpathSync(library.dir);
  } catch (error) {
    throw new ToolError(
      "PATH_NOT_FOUND",
      `the experience library ${library.dir} cannot be opened: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }
}

function describeRefresh(path: string, result: IndexResult): string {
  return result.regenerated
    ? `${path} regenerated (${result.reason}): ${result.count} documents`
    : `${path} is up to date: ${result.count} documents`;
}
