import { closeSync, existsSync, openSync, readFileSync, readSync, statSync } from "node:fs";
import { join } from "node:path";
import { LOG_FILE_NAME, logFilesOldestFirst } from "../../log/log-file.js";
import { bootstrap } from "../bootstrap.js";
import { UsageError, writeLine, type Command } from "../cli-context.js";
import { parseFlags, WORKSPACE_FLAG } from "../parse-flags.js";

const usage = `Usage: laoding logs [--trace ID] [--level LEVEL] [--follow] [--json] [--workspace DIR]

Shows the bot's logs written while chatting on a terminal (LOG_DIR, default
data/logs/ in the workspace), oldest first, one readable line each.

Options:
  --trace ID        only the lines of one message (the id a notice or an error names)
  --level LEVEL     only this level and above (trace, debug, info, warn, error, fatal)
  --follow          keep printing new lines as they are written (Ctrl-C to stop)
  --json            the raw JSON lines
${WORKSPACE_FLAG.help()}
  -h, --help        show this help`;

const LEVELS: Record<string, number> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60 };
const LEVEL_NAMES = Object.fromEntries(Object.entries(LEVELS).map(([name, value]) => [value, name.toUpperCase()]));
/** Keys every line has, shown in the line's head rather than as key=value. */
const HEAD_KEYS = new Set(["level", "time", "msg", "pid", "hostname", "traceId", "agentId"]);

export type LogFilter = { traceId?: string; minLevel: number };

export const logsCommand: Command = {
  name: "logs",
  summary: "read the logs written while chatting on a terminal (filter by trace id, follow)",
  usage,
  async run(context) {
    const { values } = parseFlags(
      context.args,
      {
        trace: { type: "string" },
        level: { type: "string" },
        follow: { type: "boolean" },
        json: { type: "boolean" },
        ...WORKSPACE_FLAG.option,
      },
      usage,
    );
    if (values.help) return (writeLine(context.stdout, usage), 0);
    const minLevel = values.level === undefined ? 0 : LEVELS[values.level];
    if (minLevel === undefined)
      throw new UsageError(`--level must be one of ${Object.keys(LEVELS).join(", ")}, not "${values.level}"`, usage);
    const boot = bootstrap(context, { seed: false, workspaceDir: values.workspace });
    const dir = boot.layout.logDir;
    const filter: LogFilter = { minLevel, ...(values.trace ? { traceId: values.trace } : {}) };
    let shownLines = 0;
    const print = (line: string) => {
      const shown = selectLine(line, filter, values.json === true);
      if (shown === undefined) return;
      shownLines += 1;
      writeLine(context.stdout, shown);
    };
    const files = logFilesOldestFirst(dir);
    if (files.length === 0 && !values.follow) {
      writeLine(
        context.stderr,
        `No logs yet in ${dir}. They are written there unless LOG_LEVEL is set in the environment or a supervisor (systemd) takes stderr (docs/deployment.md).`,
      );
      return values.trace ? 1 : 0;
    }
    for (const file of files) for (const line of readFileSync(file, "utf8").split("\n")) if (line) print(line);
    if (values.follow) await follow(join(dir, LOG_FILE_NAME), print);
    // A trace id that matches nothing is a wrong id (or logs that went elsewhere): a script must see it failed.
    else if (values.trace && shownLines === 0) {
      writeLine(
        context.stderr,
        `no log line has trace id ${values.trace}${filter.minLevel > 0 ? ` at level ${values.level ?? ""} or above` : ""} (in ${dir})`,
      );
      return 1;
    }
    return 0;
  },
};

/** The line as shown, or undefined when the filter drops it. */
export function selectLine(line: string, filter: LogFilter, json: boolean): string | undefined {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return filter.traceId || filter.minLevel > 0 ? undefined : line;
  }
  if (filter.traceId && entry.traceId !== filter.traceId) return undefined;
  if (typeof entry.level === "number" && entry.level < filter.minLevel) return undefined;
  return json ? line : formatEntry(entry);
}

export function formatEntry(entry: Record<string, unknown>): string {
  const time = typeof entry.time === "number" ? new Date(entry.time).toISOString().slice(11, 23) : "--:--:--.---";
  const level = (LEVEL_NAMES[entry.level as number] ?? String(entry.level)).padEnd(5);
  const ids = [entry.traceId, entry.agentId].filter((value) => typeof value === "string").join(" ");
  const rest = Object.entries(entry)
    .filter(([key]) => !HEAD_KEYS.has(key))
    .map(([key, value]) => `${key}=${typeof value === "string" ? value : JSON.stringify(value)}`);
  return [
    time,
    level,
    ids ? `[${ids}]` : "",
    typeof entry.msg === "string" ? entry.msg : JSON.stringify(entry.msg ?? ""),
    ...rest,
  ]
    .filter((part) => part !== "")
    .join(" ");
}

/** Prints lines appended to `file` until SIGINT/SIGTERM; a rotation starts over on the new file. */
async function follow(file: string, print: (line: string) => void): Promise<void> {
  let offset = existsSync(file) ? statSync(file).size : 0;
  let partial = "";
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      if (!existsSync(file)) return;
      const size = statSync(file).size;
      if (size < offset) offset = 0;
      if (size === offset) return;
      const buffer = Buffer.alloc(size - offset);
      const fd = openSync(file, "r");
      try {
        readSync(fd, buffer, 0, buffer.length, offset);
      } finally {
        closeSync(fd);
      }
      offset = size;
      const lines = (partial + buffer.toString("utf8")).split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) if (line) print(line);
    }, 250);
    const stop = () => {
      clearInterval(timer);
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      resolve();
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
}
