import { parseArgs, type ParseArgsConfig } from "node:util";
import { UsageError } from "./cli-context.js";

type Options = NonNullable<ParseArgsConfig["options"]>;

/** Strict flag parsing: unknown flags and missing values are usage errors. */
export function parseFlags<T extends Options>(args: string[], options: T, usage: string, allowPositionals = false) {
  try {
    return parseArgs({
      args,
      options: { ...options, help: { type: "boolean", short: "h" } },
      strict: true,
      allowPositionals,
    });
  } catch (error) {
    throw new UsageError((error as Error).message, usage);
  }
}

/**
 * The `--workspace DIR` flag the commands share, declared once: its parseArgs option and
 * its help line. `help(width)`: the flag column's width, the command's other options'.
 */
export const WORKSPACE_FLAG = {
  option: { workspace: { type: "string" } },
  help: (width = 18) => `  ${"--workspace DIR".padEnd(width)}workspace folder (overrides AGENT_WORKSPACE_DIR)`,
} as const;
