/**
 * Parser for env files (`KEY=value` lines, `#` comments, optional `export `,
 * single or double quotes). A line that is neither is an error naming file and line,
 * so a typo never silently drops a setting.
 */
import { randomBytes } from "node:crypto";
import { closeSync, fsyncSync, openSync, readFileSync, renameSync, rmSync, statSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { ConfigError } from "./config-error.js";

export type EnvEntries = Map<string, string>;

const LINE = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/;

export function parseEnvText(text: string, origin: string): EnvEntries {
  const entries: EnvEntries = new Map();
  const lines = text.split(/\r?\n/);
  lines.forEach((raw, index) => {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) return;
    const match = LINE.exec(line);
    if (!match) {
      throw new ConfigError(`${origin}:${index + 1}: cannot read "${truncate(line)}"`, {
        hint: "Write one KEY=value per line; comments start with #.",
      });
    }
    const [, key, rawValue] = match as unknown as [string, string, string];
    entries.set(key, unquote(rawValue));
  });
  return entries;
}

/** Reads an env file; a missing file is an empty map, any other read error is fatal. */
export function readEnvFile(path: string): EnvEntries | undefined {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new ConfigError(`cannot read env file ${path}: ${(error as Error).message}`, {
      hint: "Check the file's permissions.",
    });
  }
  return parseEnvText(text, path);
}

function unquote(value: string): string {
  const quote = value[0];
  if ((quote === '"' || quote === "'") && value.length >= 2 && value.endsWith(quote)) {
    const inner = value.slice(1, -1);
    return quote === '"' ? inner.replace(/\\n/g, "\n").replace(/\\"/g, '"') : inner;
  }
  // Unquoted values may carry a trailing comment: KEY=value  # note
  const hash = value.search(/\s+#/);
  return (hash >= 0 ? value.slice(0, hash) : value).trim();
}

function truncate(line: string): string {
  return line.length > 60 ? `${line.slice(0, 57)}...` : line;
}

/**
 * Sets one variable in an env file, keeping every other line (comments included) as it
 * is: the last `KEY=` line is replaced, or the line is appended. Written to a temp file
 * and renamed, so a crash leaves the old file or the new one, never half of one.
 */
export function setEnvValue(path: string, key: string, value: string): void {
  let text = "";
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT")
      throw new ConfigError(`cannot read env file ${path}: ${(error as Error).message}`, {
        hint: "Check the file's permissions.",
      });
  }
  parseEnvText(text, path);
  const lines = text === "" ? [] : text.replace(/\n$/, "").split("\n");
  const line = `${key}=${value}`;
  const at = lines.findLastIndex((candidate) => LINE.exec(candidate.trim())?.[1] === key);
  if (at >= 0) lines[at] = line;
  else lines.push(line);
  writeConfigFileAtomic(path, `${lines.join("\n")}\n`);
}

/**
 * Replaces a configuration file (configs/env, agents.json) through a temp file in the same
 * folder, synced then renamed, keeping the old file's mode (0600 when new: it may hold secrets).
 */
export function writeConfigFileAtomic(path: string, text: string): void {
  let mode = 0o600;
  try {
    mode = statSync(path).mode & 0o777;
  } catch {
    // A new file.
  }
  const temp = join(dirname(path), `.${basename(path)}.tmp-${randomBytes(6).toString("hex")}`);
  const fd = openSync(temp, "wx", mode);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } catch (error) {
    closeSync(fd);
    rmSync(temp, { force: true });
    throw error;
  }
  closeSync(fd);
  renameSync(temp, path);
}
