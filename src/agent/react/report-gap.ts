/**
 * The `report_gap` tool: offered in every ReAct request beside the toolhost's tools and
 * answered here, never sent to the toolhost (so never a tool_calls audit row). The model
 * calls it when it cannot do what the user asked: what was asked, what is missing. Its
 * arguments are checked (both strings, 1 to 300 characters); bad ones are answered with
 * an error naming the field and record nothing. One report per turn is recorded.
 */
import { z } from "zod";
import type { ToolCall, ToolSpec } from "../../llm/chat-model.js";
import { formatFailure } from "../../toolhost/protocol.js";
import type { ToolObservation } from "./react-loop.js";

export const REPORT_GAP_TOOL = "report_gap";
export const REPORT_GAP_MAX_CHARS = 300;

export const REPORT_GAP_SPEC: ToolSpec = {
  name: REPORT_GAP_TOOL,
  description:
    "Call this only when you cannot do what the user asked: no tool or skill you have can do it, or the tools failed and you cannot work around it. " +
    "It tells the operators what is missing so they can add it. Do not call it for greetings, small talk, or tasks you can do. " +
    "After calling it, tell the user honestly what you cannot do.",
  parameters: {
    type: "object",
    properties: {
      asked: {
        type: "string",
        maxLength: REPORT_GAP_MAX_CHARS,
        description: "What the user asked for, in one sentence.",
      },
      missing: {
        type: "string",
        maxLength: REPORT_GAP_MAX_CHARS,
        description: "What you lack to do it: a tool, a permission, access, know-how.",
      },
    },
    required: ["asked", "missing"],
    additionalProperties: false,
  },
};

const field = z.string().trim().min(1).max(REPORT_GAP_MAX_CHARS);
const reportArgs = z.object({ asked: field, missing: field });

export type GapReport = z.output<typeof reportArgs>;

/** The tool's handler for one turn: `record` is called for the turn's first valid report only. */
export function createReportGap(
  record: (report: GapReport) => Promise<void>,
): (call: ToolCall) => Promise<ToolObservation> {
  let reported = false;
  return async (call) => {
    if (!call.arguments.ok) return invalid(`${call.arguments.error}; send {"asked": "...", "missing": "..."}`);
    const parsed = reportArgs.safeParse(call.arguments.value);
    if (!parsed.success) return invalid(parsed.error.issues.map(issueText).join("; "));
    if (reported)
      return { ok: true, content: "Already recorded for this turn. Now tell the user honestly what you cannot do." };
    reported = true;
    await record(parsed.data);
    return {
      ok: true,
      content:
        "Recorded: the operators will see what is missing. Now tell the user honestly what you cannot do and why; do not pretend it was done.",
    };
  };
}

function invalid(reason: string): ToolObservation {
  return { ok: false, content: formatFailure({ code: "INVALID_ARGS", tool: REPORT_GAP_TOOL, reason }) };
}

/** One problem, named by its field: `missing: at most 300 characters`. */
function issueText(issue: z.ZodError["issues"][number]): string {
  const name = issue.path.join(".") || "arguments";
  if (issue.code === "too_big") return `${name}: at most ${REPORT_GAP_MAX_CHARS} characters`;
  if (issue.code === "too_small") return `${name}: must not be empty`;
  if (issue.code === "invalid_type") return `${name}: required, a string`;
  return `${name}: ${issue.message}`;
}
