/**
 * The transcript the distiller reads: the task's stored messages (the system prompt,
 * where lessons are shown, is never stored), with citation lines, lesson lines and any
 * line of the bot's that repeats an injected lesson removed, so a lesson cannot be learned again from
 * its own injection. Tool results are cut short: the distiller needs what happened, not
 * the bytes.
 */
import { terms } from "../../knowledge/keywords.js";
import type { MessageRow } from "../../store/messages-store.js";
import { withoutLessonLines } from "./citations.js";
import { jaccard } from "./lesson-rules.js";

export const TRANSCRIPT_MAX_CHARS = 6_000;
const TOOL_RESULT_MAX_CHARS = 300;
/** A line this close to an injected lesson is the lesson echoed back. */
const ECHO_JACCARD = 0.5;

export function distillTranscript(
  messages: readonly Pick<MessageRow, "role" | "kind" | "content" | "toolCalls">[],
  injectedSummaries: readonly string[],
  nextUserMessage?: string,
): string {
  const injected = injectedSummaries.map((summary) => ({ summary: normalize(summary), terms: terms(summary) }));
  // Only the bot's own words can echo a lesson; what users and tools said is evidence.
  const echoes = (line: string) =>
    injected.some(
      (lesson) =>
        normalize(line).includes(lesson.summary) ||
        jaccard(terms(line), lesson.terms) >= ECHO_JACCARD ||
        sentenceEcho(line, lesson.terms),
    );
  const lines: string[] = [];
  for (const message of messages) {
    if (message.kind === "command") continue;
    if (message.role === "tool") lines.push(`tool result: ${oneLine(message.content, TOOL_RESULT_MAX_CHARS)}`);
    else if (message.toolCalls) {
      const calls = (JSON.parse(message.toolCalls) as { name: string; arguments: string }[]).map(
        (call) => `${call.name}(${oneLine(call.arguments, 200)})`,
      );
      lines.push(`assistant calls: ${calls.join(", ")}`);
    } else if (message.role === "assistant") {
      const kept = withoutLessonLines(message.content)
        .split("\n")
        .filter((line) => !echoes(line));
      lines.push(`assistant: ${kept.join("\n")}`);
    } else lines.push(`${message.role}: ${withoutLessonLines(message.content)}`);
  }
  if (nextUserMessage !== undefined) lines.push(`user (next message): ${withoutLessonLines(nextUserMessage)}`);
  const text = lines.join("\n");
  return text.length > TRANSCRIPT_MAX_CHARS ? `${text.slice(0, TRANSCRIPT_MAX_CHARS)}\n(cut)` : text;
}

/** A sentence inside a longer line that repeats a lesson still counts as an echo. */
function sentenceEcho(line: string, lessonTerms: ReadonlySet<string>): boolean {
  return line.split(/(?<=[.!?。！？;；])\s*/).some((sentence) => jaccard(terms(sentence), lessonTerms) >= ECHO_JACCARD);
}

function normalize(text: string): string {
  return text.normalize("NFKC").toLowerCase().replace(/\s+/g, " ").trim();
}

function oneLine(text: string, max: number): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}
