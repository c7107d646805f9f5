/**
 * What caused an environment-class gap: the world failing, named by its cause (never by
 * what the user asked), so every outage of one kind is one cluster per agent. One table
 * of rules decides a gap's class when it is recorded (code) and groups stored rows when
 * they are read (SQL generated from the same rules), so rows recorded before causes
 * existed, keyed by the user's words, group by cause too. docs/gaps.md lists them.
 */

export const ENVIRONMENT_CAUSES = [
  "model-unavailable",
  "model-rate-limited",
  "model-timeout",
  "model-auth-failed",
  "model-bad-request",
  "model-bad-response",
  "sandbox-unavailable",
  "toolhost-unavailable",
  "tool-timeout",
  "mcp-unavailable",
  "command-missing",
  /** An environment row no rule names (a class stored by another version). */
  "other",
] as const;
export type EnvironmentCause = (typeof ENVIRONMENT_CAUSES)[number];

export function isEnvironmentCause(value: unknown): value is EnvironmentCause {
  return (ENVIRONMENT_CAUSES as readonly unknown[]).includes(value);
}

type CauseRule = {
  cause: EnvironmentCause;
  reason: "model_failure" | "tool_failure";
  /** Error codes that match (any code when absent). */
  codes?: readonly string[];
  /** Lowercase fragments of the detail, one of which must occur (no `%` or `_`: they are LIKE patterns too). */
  detail?: readonly string[];
};

const TOOLHOST_CODES = ["TOOLHOST_UNAVAILABLE", "TOOLHOST_CRASHED", "INTERNAL"];

/** First match wins. A gap no rule matches is a capability gap. */
const RULES: readonly CauseRule[] = [
  { cause: "model-rate-limited", reason: "model_failure", codes: ["rate_limit"] },
  { cause: "model-timeout", reason: "model_failure", codes: ["timeout"] },
  { cause: "model-auth-failed", reason: "model_failure", codes: ["auth"] },
  { cause: "model-bad-request", reason: "model_failure", codes: ["bad_request"] },
  { cause: "model-bad-response", reason: "model_failure", codes: ["bad_response"] },
  // server (5xx), connection (refused, reset, DNS), and any kind a later version adds.
  { cause: "model-unavailable", reason: "model_failure" },
  {
    cause: "sandbox-unavailable",
    reason: "tool_failure",
    codes: TOOLHOST_CODES,
    detail: ["sandbox", "bwrap", "bubblewrap", "namespace"],
  },
  { cause: "toolhost-unavailable", reason: "tool_failure", codes: TOOLHOST_CODES },
  { cause: "tool-timeout", reason: "tool_failure", codes: ["TIMEOUT"] },
  { cause: "mcp-unavailable", reason: "tool_failure", codes: ["MCP_UNAVAILABLE"] },
  // A program the host does not have is the machine's problem, not the bot's know-how.
  {
    cause: "command-missing",
    reason: "tool_failure",
    codes: ["EXIT_NONZERO"],
    detail: ["command not found", "exited with code 127", "exit code 127"],
  },
];

/** The detail as the store keeps it (gaps-store caps it there): code and SQL see the same text. */
export const CAUSE_DETAIL_MAX_CHARS = 1_000;

/** The cause of a gap, or undefined when it is no environment problem (a capability gap). */
export function environmentCause(gap: {
  reason: string;
  errorCode?: string | null | undefined;
  detail?: string | null | undefined;
}): EnvironmentCause | undefined {
  const detail = (gap.detail ?? "").slice(0, CAUSE_DETAIL_MAX_CHARS).toLowerCase();
  const rule = RULES.find(
    (candidate) =>
      candidate.reason === gap.reason &&
      (!candidate.codes || (gap.errorCode != null && candidate.codes.includes(gap.errorCode))) &&
      (!candidate.detail || candidate.detail.some((fragment) => detail.includes(fragment))),
  );
  return rule?.cause;
}

const literal = (value: string) => `'${value.replace(/'/g, "''")}'`;

function ruleSql(rule: CauseRule): string {
  const conditions = [`reason = ${literal(rule.reason)}`];
  if (rule.codes) conditions.push(`error_code IN (${rule.codes.map(literal).join(", ")})`);
  if (rule.detail)
    conditions.push(
      `(${rule.detail.map((fragment) => `lower(coalesce(detail, '')) LIKE ${literal(`%${fragment}%`)}`).join(" OR ")})`,
    );
  return `WHEN ${conditions.join(" AND ")} THEN ${literal(rule.cause)}`;
}

/** The cause of a stored capability_gaps row, in SQL (SQLite and PostgreSQL): the same rules, `other` when none matches. */
export const ENVIRONMENT_CAUSE_SQL = `CASE ${RULES.map(ruleSql).join(" ")} ELSE 'other' END`;
