/**
 * zod's issues in words for the person who has to fix the input: "`name` is missing"
 * rather than "expected string, received undefined", and the fields that are allowed
 * when an unknown one (often a typo) is found.
 */
import type { z } from "zod";

export type IssueWords = {
  /** The allowed field names of the object being checked, for unknown-field issues. */
  knownFields?: readonly string[];
  /** What to call the whole value when an issue has no path. */
  root?: string;
  /** At most this many issues are described. */
  limit?: number;
};

export function describeIssues(error: z.ZodError, words: IssueWords = {}): string {
  return error.issues
    .slice(0, words.limit ?? 5)
    .map((issue) => describeIssue(issue, words))
    .join("; ");
}

function describeIssue(issue: z.core.$ZodIssue, words: IssueWords): string {
  const where = issue.path.length > 0 ? `\`${issue.path.join(".")}\`` : (words.root ?? "the value");
  if (issue.code === "invalid_type" && /received undefined$/.test(issue.message)) return `${where} is missing`;
  if (issue.code === "unrecognized_keys") {
    const keys = issue.keys.map((key) => `\`${key}\``).join(", ");
    const known = words.knownFields ? ` (allowed: ${words.knownFields.join(", ")})` : "";
    return `unknown field${issue.keys.length > 1 ? "s" : ""} ${keys}${issue.path.length > 0 ? ` in ${where}` : ""}${known}`;
  }
  return `${where}: ${issue.message.replace(/^Invalid input: /, "")}`;
}
