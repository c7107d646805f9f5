/**
 * The Level 1 distiller's model call: given one settled task (its transcript without any
 * injected lesson or citation line), its system labels, and up to 10 similar existing
 * lessons under call-scoped aliases E1..E10, the model proposes at most 3 operations.
 * An empty list is the normal answer. Nothing here touches the store: the code that
 * applies operations validates every one of them.
 */
import { z } from "zod";
import type { ChatModel } from "../../llm/chat-model.js";
import type { Experience } from "../../store/experiences-store.js";

/** Bump when the prompt changes: distill runs are idempotent per task and prompt version. */
export const DISTILL_PROMPT_VERSION = 1;
export const MAX_OPERATIONS = 3;
export const MAX_ALIASES = 10;

export type DistillTask = {
  agentId: string;
  traceId: string;
  source: string;
  outcome: "success" | "failure";
  tags: string[];
  transcript: string;
  /** What the system knows about the task: tool errors, the user's correction, feedback. */
  evidence: string[];
};

/** Lenient wire shape: anything may be missing or wrong; the apply step says what. */
const rawOperation = z
  .object({
    op: z.unknown(),
    target: z.unknown(),
    summary: z.unknown(),
    category: z.unknown(),
    tags: z.unknown(),
    confidence: z.unknown(),
    reason: z.unknown(),
  })
  .partial();
export type RawOperation = z.infer<typeof rawOperation>;

export type DistillReply =
  | { ok: true; operations: RawOperation[]; tokens: number }
  | { ok: false; error: string; tokens: number };

export function aliasLessons(lessons: readonly Experience[]): Map<string, Experience> {
  return new Map(lessons.slice(0, MAX_ALIASES).map((lesson, index) => [`E${index + 1}`, lesson]));
}

export function distillMessages(
  task: DistillTask,
  aliases: ReadonlyMap<string, Experience>,
): { system: string; user: string } {
  const system = [
    "You keep a team's lessons from finished chat-bot tasks. Propose at most 3 operations as JSON:",
    '{"operations": [{"op": "ADD", "summary": "...", "category": "pitfall|best_practice|pattern|anti_pattern", "tags": ["..."], "confidence": 0.5},',
    ' {"op": "REINFORCE", "target": "E1"}, {"op": "CONTRADICT", "target": "E2", "reason": "..."}]}',
    "An empty list is the normal answer: most tasks teach nothing new.",
    "ADD only what the evidence shows and another task could reuse: one imperative sentence of 20-200 characters with one clause of why.",
    "Do not capture: environment or provider failures, transient errors, one-off stories, unresolved failures, or claims that a tool is broken unless you name what to do instead.",
    "REINFORCE or CONTRADICT only the existing lessons listed, by their E-number. Never invent an id.",
  ].join("\n");
  const existing = [...aliases].map(
    ([alias, lesson]) => `${alias}: ${lesson.summary} [${lesson.category}; tags ${lesson.tags.join(", ")}]`,
  );
  const user = [
    `Task outcome: ${task.outcome}. Source: ${task.source}. Tags: ${task.tags.join(", ") || "-"}.`,
    ...(task.evidence.length > 0 ? ["Evidence:", ...task.evidence.map((line) => `- ${line}`)] : []),
    "Existing similar lessons:",
    ...(existing.length > 0 ? existing : ["(none)"]),
    "Transcript:",
    task.transcript,
  ].join("\n");
  return { system, user };
}

export async function proposeOperations(
  model: ChatModel,
  task: DistillTask,
  aliases: ReadonlyMap<string, Experience>,
): Promise<DistillReply> {
  const { system, user } = distillMessages(task, aliases);
  let tokens = 0;
  try {
    const response = await model.complete({
      purpose: "distill",
      traceId: task.traceId,
      agentId: task.agentId,
      maxTokens: 600,
      messages: [
        { role: "system", content: system },
        { role: "user", content: user },
      ],
    });
    tokens = response.usage?.totalTokens ?? 0;
    return { ...parseOperations(response.content ?? ""), tokens };
  } catch (error) {
    return { ok: false, error: `the distiller call failed: ${(error as Error).message}`, tokens };
  }
}

export function parseOperations(text: string): { ok: true; operations: RawOperation[] } | { ok: false; error: string } {
  const start = text.indexOf("{");
  const end = text.lastIndexOf("}");
  if (start < 0 || end < start)
    return text.trim() === "" || /^\s*\[\s*\]\s*$/.test(text)
      ? { ok: true, operations: [] }
      : { ok: false, error: "the distiller's reply has no JSON object" };
  let value: unknown;
  try {
    value = JSON.parse(text.slice(start, end + 1));
  } catch (error) {
    return { ok: false, error: `the distiller's reply is not valid JSON: ${(error as Error).message}` };
  }
  const parsed = z.object({ operations: z.array(rawOperation) }).safeParse(value);
  return parsed.success
    ? { ok: true, operations: parsed.data.operations }
    : { ok: false, error: 'the distiller\'s reply needs {"operations": [...]}' };
}
