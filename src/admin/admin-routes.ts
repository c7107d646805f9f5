/**
 * The admin API's route table (docs/admin-api.md mirrors it). Each route validates its
 * path parameters, query and body (zod) before it calls the service; the server owns auth,
 * envelopes and logging. New routes (and the page at `/`) are added here.
 */
import { z } from "zod";
import { AGENT_ID_PATTERN } from "../config/agents.js";
import { SKILL_NAME_PATTERN } from "../knowledge/skill.js";
import { foldRuleText, RULE_MAX_CHARS } from "../store/rules-store.js";
import { describeIssues } from "../validation/describe-issues.js";
import { AdminError } from "./admin-errors.js";
import { parseLessonStatus } from "./admin-lessons.js";
import type { AdminService } from "./admin-service.js";
import { checkDocName } from "./doc-name.js";

export type RouteRequest = {
  params: Record<string, string>;
  query: URLSearchParams;
  body: unknown;
  authorized: boolean;
};

export type AdminRoute = {
  method: "GET" | "PUT" | "PATCH" | "POST" | "DELETE";
  path: string;
  /** Reachable without the token (only the health probe). */
  public?: boolean;
  /** Reads a JSON body. */
  body?: boolean;
  status?: number;
  handle(request: RouteRequest): unknown;
};

/** Largest document text accepted by PUT (the body limit applies first). */
export const DOC_MAX_CHARS = 4 * 1024 * 1024;

const libraryPatch = z.object({ enabled: z.boolean() }).strict();
const deprecateBody = z.object({ reason: z.string().trim().min(1, "say why").max(500) }).strict();
const docPut = z.object({ fileName: z.string(), content: z.string().max(DOC_MAX_CHARS) }).strict();
/** A shorter wording is counted as the rules store stores it: characters, whitespace folded. */
const ruleText = z
  .string()
  .max(RULE_MAX_CHARS * 8)
  .superRefine((value, context) => {
    const length = [...foldRuleText(value)].length;
    if (length === 0 || length > RULE_MAX_CHARS)
      context.addIssue({
        code: "custom",
        message: `a rule is 1-${RULE_MAX_CHARS} characters (whitespace folded); this one has ${length}`,
      });
  });
const ruleAccept = z
  .object({ candidate: z.string().trim().min(1, "name a candidate id").max(200), text: ruleText.optional() })
  .strict();

export function adminRoutes(service: AdminService): AdminRoute[] {
  const library = "/v1/agents/:id/experience-library";
  const lesson = "/v1/agents/:id/experiences/:expId";
  const lessonAction = (action: "pin" | "unpin" | "restore"): AdminRoute => ({
    method: "POST",
    path: `${lesson}/${action}`,
    handle: (request) => service.lessonAction(agentId(request), lessonId(request), action),
  });
  return [
    { method: "GET", path: "/v1/health", public: true, handle: (request) => service.health(request.authorized) },
    { method: "GET", path: "/v1/agents", handle: () => service.listAgents() },
    {
      method: "PATCH",
      path: library,
      body: true,
      handle: (request) => service.setLibrary(agentId(request), parseBody(libraryPatch, request.body).enabled),
    },
    { method: "GET", path: `${library}/docs`, handle: (request) => service.listDocs(agentId(request)) },
    {
      method: "GET",
      path: `${library}/docs/content`,
      handle: (request) => service.readDoc(agentId(request), checkDocName(request.query.get("file"), "file", "read")),
    },
    {
      method: "PUT",
      path: `${library}/docs/content`,
      body: true,
      handle: (request) => {
        const id = agentId(request);
        const body = parseBody(docPut, request.body);
        return service.writeDoc(id, checkDocName(body.fileName, "fileName", "write"), body.content);
      },
    },
    {
      method: "DELETE",
      path: `${library}/docs`,
      handle: (request) =>
        service.deleteDoc(agentId(request), checkDocName(request.query.get("file"), "file", "write")),
    },
    { method: "POST", path: `${library}/index/rebuild`, handle: (request) => service.rebuildIndex(agentId(request)) },
    {
      method: "GET",
      path: "/v1/agents/:id/capability-gaps",
      handle: (request) => service.capabilityGaps(agentId(request), sinceHours(request.query.get("sinceHours"))),
    },
    {
      method: "GET",
      path: "/v1/agents/:id/tool-calls",
      handle: (request) =>
        service.toolCalls(agentId(request), {
          traceId: traceIdOf(request.query.get("trace")),
          limit: limitOf(request.query.get("limit")),
        }),
    },
    {
      method: "GET",
      path: "/v1/agents/:id/skill-drafts/:name",
      handle: (request) => service.readDraft(agentId(request), draftName(request.params.name)),
    },
    {
      method: "DELETE",
      path: "/v1/agents/:id/skill-drafts/:name",
      handle: (request) => service.retireDraft(agentId(request), draftName(request.params.name)),
    },
    {
      method: "GET",
      path: "/v1/agents/:id/experiences",
      handle: (request) => service.listLessons(agentId(request), parseLessonStatus(request.query.get("status"))),
    },
    { method: "GET", path: lesson, handle: (request) => service.lessonDetail(agentId(request), lessonId(request)) },
    lessonAction("pin"),
    lessonAction("unpin"),
    lessonAction("restore"),
    {
      method: "POST",
      path: `${lesson}/deprecate`,
      body: true,
      handle: (request) => {
        const id = agentId(request);
        return service.lessonAction(id, lessonId(request), "deprecate", parseBody(deprecateBody, request.body).reason);
      },
    },
    {
      method: "GET",
      path: "/v1/agents/:id/experiences-report",
      handle: (request) => service.effectReport(agentId(request)),
    },
    { method: "GET", path: "/v1/agents/:id/mcp", handle: (request) => service.mcpServers(agentId(request)) },
    ...ruleRoutes(service),
  ];
}

function ruleRoutes(service: AdminService): AdminRoute[] {
  const rules = "/v1/agents/:id/rules";
  return [
    { method: "GET", path: rules, handle: (request) => service.listRules(agentId(request)) },
    { method: "GET", path: `${rules}/candidates`, handle: (request) => service.ruleCandidates(agentId(request)) },
    {
      method: "POST",
      path: rules,
      body: true,
      status: 201,
      handle: (request) => {
        const id = agentId(request);
        const body = parseBody(ruleAccept, request.body);
        return service.acceptRule(id, body.candidate, body.text);
      },
    },
    {
      method: "DELETE",
      path: `${rules}/:ruleId`,
      handle: (request) => service.removeRule(agentId(request), ruleId(request.params.ruleId)),
    },
  ];
}

function ruleId(value: string | undefined): number {
  const id = Number(value);
  if (!value || !/^\d{1,12}$/.test(value) || !Number.isSafeInteger(id) || id <= 0)
    throw new AdminError("RULE_NOT_FOUND", `no rule "${(value ?? "").slice(0, 40)}"; rule ids are whole numbers`);
  return id;
}

function agentId(request: RouteRequest): string {
  const id = request.params.id ?? "";
  // A malformed id names no agent: the same 404 as an unknown one.
  if (!AGENT_ID_PATTERN.test(id))
    throw new AdminError(
      "AGENT_NOT_FOUND",
      `no agent "${id.slice(0, 80)}"; agent ids are lowercase letters, digits, _ and -`,
    );
  return id;
}

function lessonId(request: RouteRequest): string {
  const id = request.params.expId ?? "";
  if (!/^exp-\d{1,12}$/i.test(id))
    throw new AdminError("LESSON_NOT_FOUND", `no lesson "${id.slice(0, 40)}"; lesson ids look like exp-000123`);
  return id;
}

function draftName(value: string | undefined): string {
  if (!value || value.length > 64 || !SKILL_NAME_PATTERN.test(value))
    throw new AdminError(
      "INVALID_REQUEST",
      "the draft name must be a skill name: lowercase letters, digits and single hyphens",
    );
  return value;
}

/** Tool calls a page of the audit trail shows at most. */
export const TOOL_CALLS_MAX = 500;

function traceIdOf(value: string | null): string | undefined {
  if (value === null) return undefined;
  if (value.length === 0 || value.length > 128)
    throw new AdminError("INVALID_REQUEST", "trace must be a trace id (1-128 characters)");
  return value;
}

function limitOf(value: string | null): number {
  if (value === null) return 50;
  const limit = Number(value);
  if (!Number.isInteger(limit) || limit <= 0 || limit > TOOL_CALLS_MAX)
    throw new AdminError(
      "INVALID_REQUEST",
      `limit must be a whole number from 1 to ${TOOL_CALLS_MAX}, not "${value.slice(0, 40)}"`,
    );
  return limit;
}

function sinceHours(value: string | null): number | undefined {
  if (value === null) return undefined;
  const hours = Number(value);
  if (!Number.isFinite(hours) || hours <= 0 || hours > 24 * 3650)
    throw new AdminError(
      "INVALID_REQUEST",
      `sinceHours must be a positive number of hours, not "${value.slice(0, 40)}"`,
    );
  return hours;
}

function parseBody<T>(schema: z.ZodType<T>, body: unknown): T {
  const parsed = schema.safeParse(body);
  if (!parsed.success)
    throw new AdminError("INVALID_BODY", `the body is not what this route takes: ${describeIssues(parsed.error)}`);
  return parsed.data;
}
