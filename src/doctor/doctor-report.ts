/**
 * The doctor's report as text (one line per check, the fix indented under a failure, a
 * summary) or as one JSON document. Both pass through the secret scrubber the logger
 * uses, so a key that leaked into some platform's error text still never reaches output.
 */
import { scrub } from "../log/logger.js";
import type { CheckResult } from "./check-result.js";

export type DoctorJson = {
  ok: boolean;
  checks: { id: string; ok: boolean; title: string; detail: string | null; fix: string | null; skipped?: true }[];
};

export function doctorOk(results: CheckResult[]): boolean {
  return results.every((result) => result.ok);
}

export function renderText(results: CheckResult[], secrets: string[]): string {
  const lines = results.flatMap((result) => {
    if (result.skipped) return [`- ${result.title}: skipped (${result.detail ?? "an earlier check failed"})`];
    if (result.ok) return [`✓ ${result.title}`, ...(result.detail ? [`    note: ${result.detail}`] : [])];
    return [`✗ ${result.title}: ${result.detail ?? "failed"}`, ...(result.fix ? [`    fix: ${result.fix}`] : [])];
  });
  const failures = results.filter((result) => !result.ok && !result.skipped).length;
  const skips = results.filter((result) => result.skipped).length;
  lines.push(
    "",
    failures + skips === 0
      ? `All ${results.length} checks passed.`
      : `${failures} problem(s) found${skips > 0 ? `, ${skips} check(s) skipped` : ""}; ${results.length - failures - skips} passed. Fix the problems above, then run \`laoding doctor\` again.`,
  );
  return scrub(`${lines.join("\n")}\n`, secrets);
}

export function renderJson(results: CheckResult[], secrets: string[]): string {
  const document: DoctorJson = {
    ok: doctorOk(results),
    checks: results.map((result) => ({
      id: result.id,
      ok: result.ok,
      title: result.title,
      detail: result.detail ?? null,
      fix: result.fix ?? null,
      ...(result.skipped ? { skipped: true as const } : {}),
    })),
  };
  return scrub(`${JSON.stringify(document, null, 2)}\n`, secrets);
}
