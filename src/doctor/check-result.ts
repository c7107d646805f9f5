/**
 * What every doctor check returns: one line of the report. A check that does not apply
 * (no chat channel, ADMIN_PORT=0) passes with a "not configured" note; a check that
 * cannot run because an earlier one failed is `skipped` (ok false: nothing was proven).
 */
import { ConfigError } from "../config/config-error.js";

export type CheckResult = {
  /** Stable id for `--json` (`model`, `sandbox:main`); a check with several findings repeats it. */
  id: string;
  ok: boolean;
  title: string;
  /** What is wrong (a failure), or a note (a pass). */
  detail?: string;
  /** The exact command or setting that fixes a failure. */
  fix?: string;
  /** Not run: an earlier check it depends on failed. */
  skipped?: boolean;
};

export function passed(id: string, title: string, detail?: string): CheckResult {
  return { id, ok: true, title, ...(detail ? { detail } : {}) };
}

export function failed(id: string, title: string, detail: string, fix: string): CheckResult {
  return { id, ok: false, title, detail, fix };
}

export function skipped(id: string, title: string, why: string): CheckResult {
  return { id, ok: false, title, detail: why, skipped: true };
}

/**
 * A ConfigError carries its fix as `hint`, appended to the message after ". ": the
 * doctor shows the two apart. Other errors have no known fix: `fallbackFix` names one.
 */
export function failedFromError(id: string, title: string, error: unknown, fallbackFix: string): CheckResult {
  if (error instanceof ConfigError && error.hint && error.message.endsWith(`. ${error.hint}`)) {
    return failed(id, title, error.message.slice(0, -(error.hint.length + 2)), error.hint);
  }
  return failed(id, title, error instanceof Error ? error.message : String(error), fallbackFix);
}
