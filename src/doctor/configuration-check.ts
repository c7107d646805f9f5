/**
 * The env configuration, with every finding rather than the first: loadConfig already
 * collects every bad variable into one ConfigError (one "  - " line each); the doctor
 * splits those lines apart and gives each its own fix from the variable table.
 */
import { join } from "node:path";
import { ConfigError } from "../config/config-error.js";
import { describeUnknownKey, type LoadedConfig } from "../config/load-config.js";
import { VARIABLES, type VariableName } from "../config/variables.js";
import { failed, failedFromError, passed, type CheckResult } from "./check-result.js";

const TITLE = "configuration";
/** How loadConfig lists its problems (load-config.ts): "invalid configuration:\n  - a\n  - b". */
const LIST_HEAD = "invalid configuration:\n  - ";

export type ConfigurationCheck = { results: CheckResult[]; loaded?: LoadedConfig };

/** `declared`: env names agents.json declares for bot credentials (not typos). */
export function checkConfiguration(
  load: () => LoadedConfig,
  workspaceDir: string,
  declared: ReadonlySet<string> = new Set(),
): ConfigurationCheck {
  let loaded: LoadedConfig;
  try {
    loaded = load();
  } catch (error) {
    if (!(error instanceof ConfigError) || !error.message.startsWith(LIST_HEAD))
      return {
        results: [
          failedFromError(
            "configuration",
            TITLE,
            error,
            "Fix the configuration (configs/env.example documents every variable)",
          ),
        ],
      };
    const body =
      error.hint && error.message.endsWith(`. ${error.hint}`)
        ? error.message.slice(0, -(error.hint.length + 2))
        : error.message;
    const findings = body.slice(LIST_HEAD.length).split("\n  - ");
    return {
      results: findings.map((finding) =>
        failed("configuration", TITLE, finding, fixFor(finding, join(workspaceDir, "configs", "env"))),
      ),
    };
  }
  const typos = loaded.unknownKeys
    .filter(({ key }) => !declared.has(key))
    .map(({ key, path }) => describeUnknownKey(key, path));
  return {
    results: [
      passed(
        "configuration",
        `${TITLE} (${loaded.filesRead.length > 0 ? loaded.filesRead.join(", ") : "no env file"})`,
        typos.length > 0 ? typos.join("; ") : undefined,
      ),
    ],
    loaded,
  };
}

/** The setting that fixes one finding of loadConfig, from its leading variable name. */
function fixFor(finding: string, workspaceEnvFile: string): string {
  const typo = /^(\S+) in (.+) is not a LaodingBot variable(?: \(did you mean (\S+)\?\))?/.exec(finding);
  if (typo)
    return typo[3]
      ? `Rename ${typo[1]} to ${typo[3]} in ${typo[2]}`
      : `Remove ${typo[1]} from ${typo[2]} (or correct its name: configs/env.example lists every variable)`;
  const named = /^([A-Z][A-Z0-9_]*)(=| is not set)/.exec(finding);
  const name = named?.[1];
  if (name === undefined || !(name in VARIABLES))
    return "Fix the values named (configs/env.example documents every variable)";
  const spec = VARIABLES[name as VariableName];
  // "NAME=value from <where>: why" names the file the value came from; a missing one goes in the workspace's env file.
  const from = /^[A-Z0-9_]+=.*? from (.+?): /.exec(finding)?.[1];
  return `Set ${name} to ${spec.expected} in ${from ?? workspaceEnvFile}`;
}
