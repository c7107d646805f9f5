/**
 * Loads the effective configuration. Precedence, highest first:
 *   0. command-line flags (only --workspace)
 *   1. the real process environment
 *   2. CONFIG_ENV_FILE
 *   3. <workspace>/.env, then <workspace>/configs/env
 *   4. repo configs/env, then repo .env (fallback only)
 * Each value remembers where it came from, so errors and `laoding config` can name it.
 */
import { isAbsolute, join, resolve } from "node:path";
import type { z } from "zod";
import { ConfigError } from "./config-error.js";
import { readEnvFile, type EnvEntries } from "./env-file.js";
import { VARIABLES, VARIABLE_NAMES, type VariableName, type VariableSpec } from "./variables.js";

export type ValueSource =
  | { kind: "environment" }
  | { kind: "flag" }
  | { kind: "file"; path: string }
  | { kind: "default" };

type Parsed<K extends VariableName> = z.output<(typeof VARIABLES)[K]["schema"]>;
export type Config = {
  [K in VariableName]: (typeof VARIABLES)[K] extends { defaultValue: string } | { required: true }
    ? Parsed<K>
    : Parsed<K> | undefined;
};

export type LoadedConfig = {
  config: Config;
  /** Source of every variable that has a value. */
  sources: Partial<Record<VariableName, ValueSource>>;
  /** The raw strings as read, for display. */
  raw: Partial<Record<VariableName, string>>;
  repoRoot: string;
  workspaceDir: string;
  /** Env files that existed and were read, highest precedence first. */
  filesRead: string[];
  /** Keys in env files that are not ours (likely typos), with the file they are in. */
  unknownKeys: { key: string; path: string }[];
  /**
   * A variable that is not in the table but declared elsewhere (bot credentials named in
   * agents.json): from the environment, else the env files in the usual precedence.
   */
  declaredValue(name: string): string | undefined;
};

export type LoadConfigOptions = {
  env: NodeJS.ProcessEnv;
  repoRoot: string;
  cwd: string;
  /** Overrides AGENT_WORKSPACE_DIR (from `--workspace`). */
  workspaceDir?: string;
};

type Layer = { source: ValueSource; entries: EnvEntries; unknown: string[]; others?: EnvEntries };

export function loadConfig(options: LoadConfigOptions): LoadedConfig {
  const flagLayer: Layer = { source: { kind: "flag" }, entries: flagEntries(options), unknown: [] };
  const envLayer: Layer = { source: { kind: "environment" }, entries: fromProcessEnv(options.env), unknown: [] };
  const { overrideLayers, repoLayers, workspaceDir } = locate(options, envLayer);
  const workspaceLayers = fileLayers([join(workspaceDir, ".env"), join(workspaceDir, "configs", "env")]);

  const layers = [flagLayer, envLayer, ...overrideLayers, ...workspaceLayers, ...repoLayers];
  const raw: Partial<Record<VariableName, string>> = {};
  const sources: Partial<Record<VariableName, ValueSource>> = {};
  const values: Record<string, unknown> = {};
  const problems: string[] = [];

  for (const name of VARIABLE_NAMES) {
    const spec: VariableSpec = VARIABLES[name];
    const found = pick(layers, name);
    let value = found?.value;
    let source: ValueSource | undefined = found?.source;
    if (value === undefined && spec.defaultValue !== undefined) {
      value = spec.defaultValue;
      source = { kind: "default" };
    }
    if (value === undefined) {
      if (spec.required) {
        problems.push(
          `${name} is not set in any env file or the environment: expected ${spec.expected}. Set it in ${join(workspaceDir, "configs", "env")}`,
        );
      }
      continue;
    }
    raw[name] = value;
    sources[name] = source as ValueSource;
    const result = spec.schema.safeParse(value);
    if (!result.success) {
      const why = result.error.issues.map((issue) => issue.message).join("; ");
      const shown = spec.secret ? "(secret)" : JSON.stringify(value);
      problems.push(
        `${name}=${shown} from ${describeSource(source as ValueSource)}: ${why}; expected ${spec.expected}`,
      );
      continue;
    }
    values[name] = result.data;
  }

  if (values.SHARE_DIR === values.WORK_DIR)
    problems.push(`SHARE_DIR and WORK_DIR are both "${String(values.WORK_DIR)}": they must be different folders`);
  const unknownKeys = layers.flatMap((layer) =>
    layer.source.kind === "file"
      ? layer.unknown.map((key) => ({ key, path: (layer.source as { path: string }).path }))
      : [],
  );
  if (problems.length > 0) {
    // A typo'd key is often why a value is missing: say it here too, not only once the rest is valid.
    for (const { key, path } of unknownKeys) problems.push(describeUnknownKey(key, path));
    throw new ConfigError(`invalid configuration:\n  - ${problems.join("\n  - ")}`, {
      hint: "Fix the values above (see configs/env.example for every variable)",
    });
  }

  return {
    config: values as Config,
    sources,
    raw,
    repoRoot: options.repoRoot,
    workspaceDir,
    filesRead: layers.flatMap((layer) => (layer.source.kind === "file" ? [layer.source.path] : [])),
    unknownKeys,
    declaredValue: (name) =>
      options.env[name] ?? layers.map((layer) => layer.others?.get(name)).find((value) => value !== undefined),
  };
}

/** "LLM_MODLE in configs/env is not a LaodingBot variable (did you mean LLM_MODEL?)" */
export function describeUnknownKey(key: string, path: string): string {
  const guess = closestVariable(key);
  return `${key} in ${path} is not a LaodingBot variable${guess ? ` (did you mean ${guess}?)` : ""}; it is ignored`;
}

function closestVariable(key: string): string | undefined {
  let best: { name: string; distance: number } | undefined;
  for (const name of VARIABLE_NAMES) {
    const distance = editDistance(key.toUpperCase(), name);
    if (distance <= 2 && (!best || distance < best.distance)) best = { name, distance };
  }
  return best?.name;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= b.length; j += 1) {
      const swap =
        i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1] ? (previous[j - 2] as number) + 1 : Infinity;
      current[j] = Math.min(
        (previous[j] as number) + 1,
        (current[j - 1] as number) + 1,
        (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1),
        swap,
      );
    }
    previous = current;
  }
  return previous[b.length] as number;
}

/**
 * Where the runtime workspace is, before the workspace's own env files exist: the
 * location may come from any layer but those files.
 */
export function resolveWorkspaceDir(options: LoadConfigOptions): string {
  return locate(options, { source: { kind: "environment" }, entries: fromProcessEnv(options.env), unknown: [] })
    .workspaceDir;
}

function flagEntries(options: LoadConfigOptions): EnvEntries {
  return new Map(options.workspaceDir ? [["AGENT_WORKSPACE_DIR", options.workspaceDir]] : []);
}

function locate(options: LoadConfigOptions, envLayer: Layer) {
  const overrideFile = envLayer.entries.get("CONFIG_ENV_FILE");
  const overrideLayers = overrideFile ? [requiredFileLayer(resolve(options.cwd, overrideFile))] : [];
  const repoLayers = fileLayers([join(options.repoRoot, "configs", "env"), join(options.repoRoot, ".env")]);
  const workspaceSetting =
    options.workspaceDir ??
    pick([envLayer, ...overrideLayers, ...repoLayers], "AGENT_WORKSPACE_DIR")?.value ??
    (VARIABLES.AGENT_WORKSPACE_DIR.defaultValue as string);
  // Relative to the repository: the workspace is what everything else resolves against.
  return { overrideLayers, repoLayers, workspaceDir: resolve(options.repoRoot, workspaceSetting) };
}

export function describeSource(source: ValueSource): string {
  switch (source.kind) {
    case "environment":
      return "the environment";
    case "flag":
      return "the command line";
    case "file":
      return source.path;
    case "default":
      return "the built-in default";
  }
}

/** Resolves a configured path against the workspace (never the repo or the cwd). */
export function resolveInWorkspace(workspaceDir: string, path: string): string {
  return isAbsolute(path) ? resolve(path) : resolve(workspaceDir, path);
}

function pick(layers: Layer[], name: string): { value: string; source: ValueSource } | undefined {
  for (const layer of layers) {
    const value = layer.entries.get(name);
    if (value !== undefined) return { value, source: layer.source };
  }
  return undefined;
}

function fromProcessEnv(env: NodeJS.ProcessEnv): EnvEntries {
  const entries: EnvEntries = new Map();
  for (const name of VARIABLE_NAMES) {
    const value = env[name];
    if (value !== undefined) entries.set(name, value);
  }
  return entries;
}

function fileLayers(paths: string[]): Layer[] {
  return paths.flatMap((path) => {
    const entries = readEnvFile(path);
    return entries ? [fileLayer(path, entries)] : [];
  });
}

function requiredFileLayer(path: string): Layer {
  const entries = readEnvFile(path);
  if (!entries) {
    throw new ConfigError(`CONFIG_ENV_FILE points to ${path}, which does not exist`, {
      hint: "Create the file or unset CONFIG_ENV_FILE",
    });
  }
  return fileLayer(path, entries);
}

/** Env files may hold other tools' variables too: only ours take part, the rest are reported. */
function fileLayer(path: string, entries: EnvEntries): Layer {
  const ours: EnvEntries = new Map();
  const others: EnvEntries = new Map();
  for (const [key, value] of entries) {
    if (key in VARIABLES) ours.set(key, value);
    else others.set(key, value);
  }
  return { source: { kind: "file", path }, entries: ours, unknown: [...others.keys()], others };
}
