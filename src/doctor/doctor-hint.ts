/**
 * The line `laoding start` adds when start-up fails for something the doctor checks
 * (configuration, sandbox, a bot's login): one command then shows every problem, not
 * only the first.
 */
import { ConfigError } from "../config/config-error.js";
import { SandboxUnavailableError } from "../runtime/toolhost-launch.js";

export const DOCTOR_HINT = "Run `laoding doctor` to check everything at once.";

/** Adds the hint to a start-up failure the doctor would name; other errors pass unchanged. */
export function withDoctorHint(error: unknown): unknown {
  if (
    (error instanceof ConfigError || error instanceof SandboxUnavailableError) &&
    !error.message.endsWith(DOCTOR_HINT)
  ) {
    error.message = `${error.message}\n${DOCTOR_HINT}`;
  }
  return error;
}
