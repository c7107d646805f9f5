import { parseArgs, type ParseArgsConfig } from "node:util";
import { UsageError } from "./cli-context.js";

type Options = NonNullable<ParseArgsConfig["options"]>;

/** Strict flag parsing: unknown flags and missing values are usage errors. */
export function parseFlags<T extends Options>(args: string[], options: T, usage: string, allowPositionals = false) {
  try {
    return parseArgs({ args, options: { ...options, help: { type: "boolean", short: "h" } }, strict: true, allowPositionals });
  } catch (error) {
    throw new UsageError((error as Error).message, usage);
  }
}
