import { randomBytes } from "node:crypto";

/** A short id for one incoming message, carried into logs, tool calls, gaps and messages. */
export function newTraceId(): string {
  return `tr-${randomBytes(8).toString("hex")}`;
}
