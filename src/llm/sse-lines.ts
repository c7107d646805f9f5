/**
 * Server-sent events from a response body, as chat completions streams send them: `data:`
 * lines (several in one event are joined with "\n"), a blank line ending each event, `:`
 * comments (keep-alives) skipped, `event:` kept (a server may name an `error` event), other
 * fields ignored. Lines may end in "\n", "\r\n" or "\r"; UTF-8 is decoded across reads, so a
 * character split between two network packets stays whole.
 *
 * Lenient where servers are sloppy: a `data:` line that follows a complete JSON (or
 * `[DONE]`) data line without the blank line between starts a new event; an event still
 * open when the body ends is handed over marked `complete: false` (the caller decides
 * whether it is whole or was cut off).
 */
export type SseEvent = {
  data: string;
  /** The `event:` field, when the server named one. */
  event: string | undefined;
  /** False for the last event when the body ended before its blank line. */
  complete: boolean;
};

export async function* sseEvents(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<SseEvent, void, undefined> {
  const decoder = new TextDecoder("utf-8");
  const builder = new EventBuilder();
  let buffer = "";
  for await (const chunk of chunks) {
    buffer += decoder.decode(chunk, { stream: true });
    const { lines, rest } = splitLines(buffer, false);
    buffer = rest;
    for (const line of lines) yield* builder.line(line);
  }
  buffer += decoder.decode();
  const { lines, rest } = splitLines(buffer, true);
  for (const line of [...lines, ...(rest === "" ? [] : [rest])]) yield* builder.line(line);
  const last = builder.flush();
  if (last) yield { ...last, complete: false };
}

/** Whole lines of `buffer` and what is left of an unfinished one; a "\r" at the very end may still get its "\n". */
export function splitLines(buffer: string, final: boolean): { lines: string[]; rest: string } {
  const lines: string[] = [];
  let start = 0;
  for (let index = 0; index < buffer.length; index += 1) {
    const char = buffer[index];
    if (char !== "\n" && char !== "\r") continue;
    if (char === "\r" && index === buffer.length - 1 && !final) break;
    lines.push(buffer.slice(start, index));
    if (char === "\r" && buffer[index + 1] === "\n") index += 1;
    start = index + 1;
  }
  return { lines, rest: buffer.slice(start) };
}

class EventBuilder {
  private data: string[] = [];
  private event: string | undefined;

  *line(line: string): Generator<SseEvent> {
    if (line === "") {
      const event = this.flush();
      if (event) yield event;
      return;
    }
    if (line.startsWith(":")) return;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") this.event = value;
    if (field !== "data") return;
    // A server that forgot the blank line after a whole JSON line: that line was an event of its own.
    if (this.data.length > 0 && isWhole(this.data.join("\n"))) {
      const event = this.flush();
      if (event) yield event;
    }
    this.data.push(value);
  }

  flush(): SseEvent | undefined {
    const event = this.data.length > 0 ? { data: this.data.join("\n"), event: this.event, complete: true } : undefined;
    this.data = [];
    this.event = undefined;
    return event;
  }
}

function isWhole(data: string): boolean {
  const trimmed = data.trim();
  if (trimmed === "[DONE]") return true;
  if (!trimmed.startsWith("{")) return false;
  try {
    JSON.parse(trimmed);
    return true;
  } catch {
    return false;
  }
}
