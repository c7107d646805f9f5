import { z } from "zod";
import { checkCommand, SAFE_BUILTINS } from "../shell/command-policy.js";
import { FLOOD_FACTOR } from "../shell/shell-runner.js";
import { ToolError } from "../tool-error.js";
import { defineTool } from "./define-tool.js";
import { capturedText } from "./truncate-output.js";

/** What the egress proxy refused while a command ran (the child's forwarder keeps it: net/proxy-forwarder.ts). */
export type EgressRefusals = { refusalsSince(time: number, tag?: string): string[] };

/**
 * Builds shell.exec for an allowlist; every simple command of the line is checked.
 * `refusals`: with an allow list, a command that failed after the proxy refused a host
 * is reported as NETWORK_REFUSED with the proxy's reason, so the model learns why
 * (curl alone only says "CONNECT tunnel failed, response 403"). A client that does not
 * send the proxy user its URL names cannot be told apart from the agent's other calls:
 * its refusals show only in its own output.
 */
export function createShellExecTool(allowedCommands: readonly string[], network: boolean, refusals?: EgressRefusals) {
  const allowed = new Set(allowedCommands);
  return defineTool({
    name: "shell.exec",
    description: `Run a command line with bash in the working folder. Every command of a pipeline or list must be one of: ${[...allowed].sort().join(", ")} (and the builtins ${[...SAFE_BUILTINS].join(", ")}). No command substitution, subshells or file redirections (use file.write). Output is capped (head + tail); nothing started by the command survives it.`,
    hints: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: network },
    deadline: {
      argument: "timeout_ms",
      defaultMs: (limits) => limits.shellTimeoutMs,
      maxMs: (limits) => limits.shellMaxTimeoutMs,
    },
    runsInFolder: true,
    inputSchema: z
      .object({
        command: z.string().min(1).max(10_000),
        timeout_ms: z
          .number()
          .int()
          .min(100)
          .optional()
          .describe("Timeout in milliseconds; capped by the configured maximum"),
      })
      .strict(),
    async execute(args, context) {
      const verdict = checkCommand(args.command, allowed);
      if (!verdict.allowed) throw new ToolError("COMMAND_NOT_ALLOWED", verdict.reason);
      const timeoutMs = Math.min(args.timeout_ms ?? context.limits.shellTimeoutMs, context.limits.shellMaxTimeoutMs);
      const started = Date.now();
      const result = await context.shell.run({
        command: args.command,
        cwd: context.cwd,
        timeoutMs,
        maxCaptureBytes: context.limits.outputMaxBytes,
        signal: context.signal,
      });
      const { text: body, truncated } = capturedText(
        result.head,
        result.tail,
        result.totalBytes,
        context.limits.outputMaxBytes,
      );
      if (result.timedOut)
        throw new ToolError("TIMEOUT", `the command ran longer than ${timeoutMs} ms and was killed`, body);
      if (result.cancelled) throw new ToolError("TIMEOUT", "the call was cancelled and the command killed", body);
      if (result.overProcessShare)
        throw new ToolError(
          "EXIT_NONZERO",
          "the command was killed: it started more processes than one call may hold (the agent's other calls need the rest)",
          body,
        );
      const flooded = result.flooded
        ? `\n…[output passed ${context.limits.outputMaxBytes * FLOOD_FACTOR} bytes; the command was killed]`
        : "";
      // A refusal is the news, whatever the exit code: curl shows a plain-HTTP refusal as
      // a page and exits 0, and `|| true` hides the rest. The output still goes with it.
      // Only this call's: the agent's other calls and servers share the forwarder.
      const refused = refusals?.refusalsSince(started, result.marker) ?? [];
      if (refused.length > 0) throw new ToolError("NETWORK_REFUSED", refusedReason(refused), body);
      if (!result.flooded && result.exitCode !== 0) {
        const how =
          result.exitCode === null
            ? `was killed by ${result.signal ?? "a signal"}`
            : `exited with code ${result.exitCode}`;
        throw new ToolError("EXIT_NONZERO", `the command ${how}`, body);
      }
      return { output: `${body}${flooded}` || "(no output, exit code 0)", truncated: truncated || result.flooded };
    },
  });
}

function refusedReason(reasons: readonly string[]): string {
  const distinct = [...new Set(reasons)];
  return distinct.length <= 3
    ? distinct.join("; ")
    : `${distinct.slice(0, 3).join("; ")}; and ${distinct.length - 3} more`;
}
