/**
 * What a person watching a streamed answer may see so far. The model's text arrives in
 * pieces; the preview is the text with its citations removed exactly as the final answer's
 * are, and with the unfinished end of the last line held back while it could still become
 * a citation (`Lessons used: exp-…`, `[exp-3]`) or is a word cut in half: a citation
 * must never flash on the screen before the line that removes it is complete.
 */
import type { ModelStreamSink } from "../../llm/chat-model.js";
import { extractCitations } from "../distillation/citations.js";

/** How far back an opening bracket may still start a citation (`(Lessons used: exp-3, exp-17)` is ~30 characters). */
const OPENER_REACH = 40;
const OPENERS = /[[【`(（]/gu;
/** Where a citation label (citation-scan.ts's LABEL) or an id may begin; a verb that only makes a label with 经验 after it, at the end. */
const LABEL_CUE = /lessons?|referenc|参考|经验|\bexp-\d|(?:使用|用到|引用|应用|用了|所用)[了的]?$/iu;
const TRAILING_OPENERS = /[\s[【`(（*_~\p{Extended_Pictographic}]+$/u;
/** A word still being written (letters, digits, `-`, `_`) at the very end. */
const UNFINISHED_WORD = /[\p{L}\p{N}_-]+$/u;
const CJK = /[\u3000-\u9fff\uac00-\ud7af\uff00-\uffef]$/u;

/** The visible preview of `raw` (the response's text so far). */
export function previewOf(raw: string, loopOn: boolean): string {
  const lineStart = raw.lastIndexOf("\n") + 1;
  const partial = raw.slice(lineStart);
  const shown = raw.slice(0, lineStart) + partial.slice(0, visibleLength(partial));
  return extractCitations(shown, loopOn).answer.trim();
}

/** How much of the unfinished last line may be shown. */
function visibleLength(partial: string): number {
  let end = partial.length;
  const label = LABEL_CUE.exec(partial);
  if (label) end = Math.min(end, label.index);
  for (const opener of partial.matchAll(OPENERS)) {
    if (opener.index >= partial.length - OPENER_REACH) {
      end = Math.min(end, opener.index);
      break;
    }
  }
  // Cut before a held-back citation: what opens it (`(`, `**`, `📚 `) goes with it, and the word before is complete.
  if (end < partial.length) return partial.slice(0, end).replace(TRAILING_OPENERS, "").length;
  // CJK has no spaces between words: each character is a word of its own.
  if (CJK.test(partial)) return partial.length;
  const unfinished = UNFINISHED_WORD.exec(partial);
  return unfinished ? unfinished.index : partial.length;
}

/**
 * A sink for one model call that may be the answer: its text becomes previews; a tool
 * call means the text shown so far was not the answer, and the channel is told so ("").
 */
export function answerPreviewSink(show: (text: string) => void, loopOn: boolean): ModelStreamSink {
  let raw = "";
  let shown = "";
  let toolStep = false;
  return {
    onText(delta) {
      if (toolStep) return;
      raw += delta;
      const next = previewOf(raw, loopOn);
      if (next === shown) return;
      shown = next;
      show(next);
    },
    onToolCall() {
      if (toolStep) return;
      toolStep = true;
      if (shown !== "") show("");
      shown = "";
    },
  };
}
