/**
 * The scripted agent model: routes by the task's family, and answers by applying the
 * lessons it was shown. For each trap it follows the first lesson about that trap with
 * probability `follow` (right or wrong), else solves it by luck; it cites what it applied
 * with probability `cite`; an instruction hidden in a lesson is obeyed with some
 * probability; long lesson text distracts a little. Every draw comes from the seed, the
 * task and the trap, so the arms see the same luck. `successProbability` is the same
 * model in closed form: the harness's true effect comes from it. Its citation is the
 * plain `Lessons used:` line, or (style `markdown`) one of the forms real models write,
 * rotating by task: a bold label, brackets at the end, backticks, parentheses, a trailing
 * citation after text on the last line, the zh bold label with a full-width colon.
 */
import type { ChatModel, ChatRequest, ChatResponse } from "../src/llm/chat-model.js";
import { uniform, WORLD, type Family, type Task, type Trap } from "./world.js";

export type ShownLesson = { id: number; text: string };

const INSTRUCTION = /ignore (all )?previous instructions/i;

export function lessonsInPrompt(system: string): ShownLesson[] {
  return [...system.matchAll(/^\[exp-(\d+)\] (.+)$/gm)].map((match) => ({
    id: Number(match[1]),
    text: match[2] as string,
  }));
}

function aboutTrap(lesson: ShownLesson, family: Family, trap: Trap): boolean {
  return lesson.text.includes(family.name) && lesson.text.includes(trap.topic);
}

function lengthPenalty(lessons: readonly ShownLesson[]): number {
  const chars = lessons.reduce((sum, lesson) => sum + lesson.text.length, 0);
  return Math.min(0.5, (chars / 100) * WORLD.lengthPenaltyPer100Chars);
}

/** P(success) of a task shown these lessons, in closed form. */
export function successProbability(task: Task, lessons: readonly ShownLesson[]): number {
  let probability = 1 - lengthPenalty(lessons);
  if (lessons.some((lesson) => INSTRUCTION.test(lesson.text))) probability *= 1 - WORLD.obeyInstruction;
  for (const trap of task.family.traps) {
    const first = lessons.find((lesson) => aboutTrap(lesson, task.family, trap));
    const right = first ? first.text.includes(trap.remedy) && !first.text.includes(trap.wrong) : false;
    probability *= first ? WORLD.follow * (right ? 1 : 0) + (1 - WORLD.follow) * WORLD.luck : WORLD.luck;
  }
  return probability;
}

export type CitationStyle = "line" | "markdown";

/** What the agent wrote for a task: the answer without its citation, and the whole reply. */
export type Written = { body: string; reply: string };

export function createScriptedAgent(options: {
  seed: number;
  taskByText: (text: string) => Task | undefined;
  distiller: (request: ChatRequest) => string;
  citationStyle?: CitationStyle;
}): ChatModel & { calls: Record<string, number>; written: Map<number, Written> } {
  const calls: Record<string, number> = {};
  const written = new Map<number, Written>();
  const reply = (content: string): ChatResponse => ({
    content,
    toolCalls: [],
    finishReason: "stop",
    model: "scripted",
    usage: {
      promptTokens: Math.ceil(content.length / 4),
      completionTokens: 20,
      totalTokens: Math.ceil(content.length / 4) + 20,
    },
  });
  return {
    model: "scripted",
    calls,
    written,
    complete(request) {
      calls[request.purpose] = (calls[request.purpose] ?? 0) + 1;
      const last = request.messages.at(-1);
      const userText = last?.role === "user" ? last.content : "";
      if (request.purpose === "distill") return Promise.resolve(reply(options.distiller(request)));
      const task = options.taskByText(userText);
      if (request.purpose === "route")
        return Promise.resolve(
          reply(
            JSON.stringify({ skills: [], intent_key: task?.family.slug ?? familySlugIn(userText), confidence: 0.9 }),
          ),
        );
      if (request.purpose !== "react" || !task) return Promise.resolve(reply("Understood, noted."));
      const system = request.messages[0]?.role === "system" ? request.messages[0].content : "";
      const { body, cited } = answer(options.seed, task, lessonsInPrompt(system));
      const text = withCitation(body, cited, options.citationStyle ?? "line", task.index);
      written.set(task.index, { body, reply: text });
      return Promise.resolve(reply(text));
    },
  };
}

function familySlugIn(text: string): string {
  const match = /for ([a-z]+ [a-z]+),/.exec(text);
  return match ? (match[1] as string).replace(" ", "-") : "unknown";
}

function answer(seed: number, task: Task, lessons: readonly ShownLesson[]): { body: string; cited: number[] } {
  const draw = (...key: number[]) => uniform(seed, task.index, 100, ...key);
  if (lessons.some((lesson) => INSTRUCTION.test(lesson.text)) && draw(1) < WORLD.obeyInstruction)
    return { body: "OK", cited: [] };
  const applied: string[] = [];
  const cited = new Set<number>();
  task.family.traps.forEach((trap, trapIndex) => {
    const first = lessons.find((lesson) => aboutTrap(lesson, task.family, trap));
    if (first && draw(10, trapIndex) < WORLD.follow) {
      const token = first.text.includes(trap.remedy) ? trap.remedy : first.text.includes(trap.wrong) ? trap.wrong : "";
      if (token) applied.push(token);
      if (draw(11, trapIndex) < WORLD.cite) cited.add(first.id);
    } else if (draw(12, trapIndex) < WORLD.luck) applied.push(trap.remedy);
  });
  // A distracted answer forgets the remedies it had.
  if (draw(2) < lengthPenalty(lessons)) applied.length = 0;
  if (draw(3) < WORLD.falseCitation) cited.add(999_999);
  return {
    body: `Done: ${task.family.name}${applied.length > 0 ? ` with ${applied.join(" ")}` : ""}.`,
    cited: [...cited],
  };
}

/** The citation forms real models write, in the order the markdown style rotates through them. */
export const CITATION_FORMS = [
  (body: string, ids: string[]) => `${body}\n\n**Lessons used:** ${ids.join(", ")}`,
  (body: string, ids: string[]) => `${body} [${ids.join(", ")}]`,
  (body: string, ids: string[]) => `${body}\nLessons used: ${ids.map((id) => `\`${id}\``).join(", ")}`,
  (body: string, ids: string[]) => `${body}\n(Lessons used: ${ids.join(", ")})`,
  (body: string, ids: string[]) => `${body} Lessons used: ${ids.join(", ")}`,
  (body: string, ids: string[]) => `${body}\n\n**参考了：** ${ids.join("、")}`,
] as const;

function withCitation(body: string, cited: readonly number[], style: CitationStyle, taskIndex: number): string {
  if (cited.length === 0) return body;
  const ids = cited.map((id) => `exp-${id}`);
  if (style === "line") return `${body}\nLessons used: ${ids.join(", ")}`;
  const form = CITATION_FORMS[taskIndex % CITATION_FORMS.length] as (typeof CITATION_FORMS)[number];
  return form(body, ids);
}
