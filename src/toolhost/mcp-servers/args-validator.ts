/**
 * An MCP tool's arguments are checked against the server's own input schema (JSON
 * Schema) before the call goes out, so a bad call is INVALID_ARGS naming the argument,
 * as for our own tools, and the server never sees it. The check is a zod schema around
 * an ajv validator, compiled once per tool: toolhost-server.ts validates every tool the
 * same way (`inputSchema.safeParse`).
 *
 * The schema comes from a program the agent runs, so compiling it must stay cheap and
 * safe: ajv never runs code from a schema, `pattern`s run on RE2 (linear time, see
 * linear-regex.ts; a pattern RE2 does not take is left to the server), formats are left
 * to the server, and a schema ajv cannot compile makes the caller skip the tool (a broken
 * schema in the model's tool list could make the model's API refuse every request).
 */
import { Ajv, type ErrorObject, type Options, type ValidateFunction } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import { z } from "zod";
import { compileLinear } from "../tools/linear-regex.js";

/** Issues described at most (describe-issues.ts shows five). */
const MAX_ISSUES = 5;

/** `pattern` and `patternProperties` on RE2; a pattern it refuses (lookaround, too large) matches anything here. */
const linearRegExp = Object.assign(
  (pattern: string) => {
    try {
      return compileLinear(pattern, "pattern");
    } catch {
      return { test: () => true };
    }
  },
  { code: "linearRegExp" },
);

const AJV_OPTIONS: Options = {
  strict: false,
  allErrors: true,
  validateFormats: false,
  logger: false,
  code: { regExp: linearRegExp },
};

/**
 * Compiles the input schemas of one tools listing. One compiler per listing: ajv keeps
 * every schema it compiled, so a compiler shared across refreshes (tools/list_changed)
 * would grow for ever; this one is dropped with the listing.
 */
export function createArgsCompiler(): (schema: Record<string, unknown>) => z.ZodType {
  let draft07: Ajv | undefined;
  let draft2020: Ajv2020 | undefined;
  const compile = (schema: Record<string, unknown>, dialect: "07" | "2020"): ValidateFunction =>
    dialect === "07"
      ? (draft07 ??= new Ajv(AJV_OPTIONS)).compile(schema)
      : (draft2020 ??= new Ajv2020(AJV_OPTIONS)).compile(schema);

  return (schema) => {
    // The dialect a schema names; without one, MCP says 2020-12. Each compiler knows only
    // its own meta-schema, and a root $id would clash with another tool's.
    const { $schema, $id: _id, ...body } = schema;
    const named = typeof $schema === "string" && /draft-0[4-7]/.test($schema) ? "07" : "2020";
    let validate: ValidateFunction;
    try {
      validate = compile(body, named);
    } catch (first) {
      try {
        // Servers often write draft-07 without saying so (`items: [...]`, `definitions`).
        validate = compile(body, named === "07" ? "2020" : "07");
      } catch {
        throw new Error(`its input schema does not compile: ${(first as Error).message}`);
      }
    }
    return z.unknown().superRefine((value, context) => {
      if (validate(value)) return;
      for (const error of (validate.errors ?? []).slice(0, MAX_ISSUES)) context.addIssue(toIssue(error));
    });
  };
}

type Issue = Parameters<z.core.$RefinementCtx["addIssue"]>[0];

/** One ajv error as a zod issue whose path names the argument, in describe-issues.ts's words. */
function toIssue(error: ErrorObject): Issue {
  const path = error.instancePath
    .split("/")
    .slice(1)
    .map((part) => part.replaceAll("~1", "/").replaceAll("~0", "~"));
  const params = error.params as Record<string, unknown>;
  if (error.keyword === "required" && typeof params.missingProperty === "string")
    // Worded as zod's own missing field, so it reads "`path` is missing" like our tools' errors.
    return {
      code: "invalid_type",
      expected: "unknown",
      input: undefined,
      path: [...path, params.missingProperty],
      message: "Invalid input: expected value, received undefined",
    } as Issue;
  if (error.keyword === "additionalProperties" && typeof params.additionalProperty === "string")
    return { code: "custom", path, message: `unknown field \`${params.additionalProperty}\`` };
  const allowed = Array.isArray(params.allowedValues)
    ? ` (${params.allowedValues
        .slice(0, 10)
        .map((value) => JSON.stringify(value))
        .join(", ")})`
    : "";
  return { code: "custom", path, message: `${error.message ?? `fails \`${error.keyword}\``}${allowed}` };
}
