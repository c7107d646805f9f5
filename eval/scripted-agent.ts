/**
 * The scripted agent model: routes by the task's family, and answers by applying the
 * lessons it was shown. For each trap it follows the first lesson about that trap with
 * probability `follow` (right or wrong), else solves it by luck; it cites what it applied
 * with probability `cite`; an instruction hidden in a lesson is obeyed with some
 * probability; long lesson text distracts a little. Every draw comes from the seed, the
 * task and the trap, so the arms see the same luck. `successProbability` is the same
 * model in closed form: the harness's true effect comes from it.
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

export function createScriptedAgent(options: {
  seed: number;
  taskByText: (text: string) => Task | undefined;
  distiller: (request: ChatRequest) => string;
}): ChatModel & { calls: Record<string, number> } {
  const calls: Record<string, number> = {};
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
      return Promise.resolve(reply(answer(options.seed, task, lessonsInPrompt(system))));
    },
  };
}

function familySlugIn(text: string): string {
  const match = /for ([a-z]+ [a-z]+),/.exec(text);
  return match ? (match[1] as string).replace(" ", "-") : "unknown";
}

function answer(seed: number, task: Task, lessons: readonly ShownLesson[]): string {
  const draw = (...key: number[]) => uniform(seed, task.index, 100, ...key);
  if (lessons.some((lesson) => INSTRUCTION.test(lesson.text)) && draw(1) < WORLD.obeyInstruction) return "OK";
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
  const lines = [`Done: ${task.family.name}${applied.length > 0 ? ` with ${applied.join(" ")}` : ""}.`];
  if (cited.size > 0) lines.push(`Lessons used: ${[...cited].map((id) => `exp-${id}`).join(", ")}`);
  return lines.join("\n");
}
