import type { ToolErrorCode } from "./protocol.js";

/** A tool failure the model should read; the server turns it into an `ok: false` result. */
export class ToolError extends Error {
  override readonly name = "ToolError";
  constructor(
    readonly code: ToolErrorCode,
    message: string,
    /** Output produced before the failure (a failing command's stdout/stderr). */
    readonly output?: string,
  ) {
    super(message);
  }
}
