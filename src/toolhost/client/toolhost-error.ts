/** Why a call could not get a result from the child. Local only: never crosses the wire. */
export type ToolhostFaultCode = "TIMEOUT" | "TOOLHOST_CRASHED" | "TOOLHOST_UNAVAILABLE" | "INTERNAL";

export class ToolhostError extends Error {
  override readonly name = "ToolhostError";
  constructor(
    readonly code: ToolhostFaultCode,
    message: string,
    options: { cause?: unknown } = {},
  ) {
    super(message, options);
  }
}
