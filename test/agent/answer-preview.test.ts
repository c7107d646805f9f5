import { describe, expect, it } from "vitest";
import { answerPreviewSink, previewOf } from "../../src/agent/turn/answer-preview.js";
import { extractCitations } from "../../src/agent/distillation/citations.js";
import { steeredModel } from "../../src/agent/turn/steered-model.js";
import type { ChatModel, ChatRequest } from "../../src/llm/chat-model.js";

/** Every preview of `answer` streamed `size` characters at a time. */
function previews(answer: string, size: number, loopOn = true): string[] {
  const shown: string[] = [];
  const sink = answerPreviewSink((text) => shown.push(text), loopOn);
  for (let at = 0; at < answer.length; at += size) sink.onText(answer.slice(at, at + size));
  return shown;
}

describe("the answer preview", () => {
  it("never shows a citation, whatever the chunking, and ends at the final answer once its line ends", () => {
    const answers = [
      "The port is 8080.\nLessons used: exp-3, exp-17",
      "Restart the service first (Lessons used: exp-3) and then check the log.",
      "Done. **Lessons used:** exp-12",
      "端口是 8080。\n参考了 exp-3",
      "Use the flag --force.\n[exp-4]",
    ];
    for (const answer of answers) {
      const final = extractCitations(answer, true).answer.trim();
      for (const size of [1, 2, 3, 5, 8, 13]) {
        const shown = previews(answer, size);
        for (const text of shown) expect(text, `${answer} by ${size}`).not.toMatch(/exp-\d|Lessons|参考/);
        // The unfinished last line may still be held back: the channel gets the final answer itself.
        expect(final.startsWith(shown.at(-1) ?? ""), `${answer} by ${size}`).toBe(true);
        expect(previews(`${answer}\n`, size).at(-1), `${answer} by ${size}`).toBe(final);
      }
    }
  });

  it("shows whole words only, and grows", () => {
    const shown = previews("Hello wonderful world, this is the answer", 3, false);
    for (const text of shown)
      expect(text.split(" ").every((word) => "Hello wonderful world, this is the answer".includes(word))).toBe(true);
    expect(shown).not.toContain("Hel");
    expect(shown).not.toContain("Hello wo");
    expect(shown[0]).toBe("Hello");
    expect(shown.at(-1)).toBe("Hello wonderful world, this is the");
  });

  it("shows CJK text character by character", () => {
    expect(previewOf("你好世界", false)).toBe("你好世界");
  });

  it("holds back a bracket near the end until the line is done", () => {
    expect(previewOf("Run it now (see", false)).toBe("Run it now");
    expect(previewOf("Run it now (see below)\n", false)).toBe("Run it now (see below)");
  });

  it("takes back what was shown when the model goes on to call a tool", () => {
    const shown: string[] = [];
    const sink = answerPreviewSink((text) => shown.push(text), false);
    sink.onText("Let me check the file.\n");
    sink.onToolCall("file.read");
    sink.onText("ignored after a tool call ");
    expect(shown).toEqual(["Let me check the file.", ""]);
  });
});

describe("the steered model", () => {
  const scripted = (reply: (request: ChatRequest) => string): ChatModel => ({
    model: "scripted",
    async complete(request) {
      const content = reply(request);
      for (const piece of content.match(/.{1,4}/gsu) ?? []) request.stream?.onText(piece);
      return { content, toolCalls: [], finishReason: "stop", model: "scripted" };
    },
  });

  it("streams only the calls whose text may be the answer", async () => {
    const shown: string[] = [];
    const model = steeredModel(
      scripted((request) => (request.purpose === "route" ? '{"skills": []}\n' : "The answer is 42.\n")),
      new AbortController().signal,
      { onAnswer: (text) => shown.push(text) },
    );
    await model.complete({ purpose: "route", messages: [] });
    await model.complete({ purpose: "summary", messages: [] });
    expect(shown).toEqual([]);
    await model.complete({ purpose: "react", messages: [] });
    expect(shown.at(-1)).toBe("The answer is 42.");
    expect(shown.some((text) => text.includes("skills"))).toBe(false);
  });

  it("asks for no stream when the channel does not stream", async () => {
    const seen: (ChatRequest["stream"] | undefined)[] = [];
    const model = steeredModel(
      {
        model: "m",
        async complete(request) {
          seen.push(request.stream);
          return { content: "x", toolCalls: [], finishReason: "stop", model: "m" };
        },
      },
      new AbortController().signal,
      {},
    );
    await model.complete({ purpose: "react", messages: [] });
    expect(seen).toEqual([undefined]);
  });
});
