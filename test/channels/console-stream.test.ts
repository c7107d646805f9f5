/**
 * Streamed replies on the console: the status line and the answer as it grows, over a
 * fake terminal (an output stream with `columns`) replayed on a test screen; and the
 * console channel with a scripted handler, interactive and piped.
 */
import { PassThrough, Writable } from "node:stream";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { MessageHandler, TurnControl } from "../../src/channels/channel.js";
import { createConsoleChannel } from "../../src/channels/console-channel.js";
import { createConsoleReply } from "../../src/channels/console-reply.js";
import { createStatusLine } from "../../src/channels/console-status.js";
import { terminalScreen } from "../helpers/terminal-screen.js";

const SPINNER = /[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/;

/** An output stream that is a terminal of `columns`, keeping what was written. */
function fakeTerminal(columns: number, isTTY = true) {
  const writes: string[] = [];
  let all = "";
  const output = Object.assign(
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        writes.push(chunk.toString("utf8"));
        all += chunk.toString("utf8");
        done();
      },
    }),
    { columns, isTTY },
  );
  return {
    output,
    writes,
    /** Everything written (`writes` may be emptied by a test to look at what comes next). */
    written: () => all,
    /** The rows a person sees (the line discipline turns `\n` into `\r\n`), the cursor's row last. */
    rows: () => {
      const screen = terminalScreen(columns);
      screen.write(all.replace(/\r?\n/g, "\r\n"));
      return screen.rows();
    },
  };
}

describe("a console reply streamed on a terminal", () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  function turn(columns = 40) {
    const terminal = fakeTerminal(columns);
    const status = createStatusLine(terminal.output, { locale: "en", now: () => Date.now() });
    const reply = createConsoleReply({ output: terminal.output, locale: "en", status });
    return { ...terminal, reply };
  }

  it("erases the status line before the first text, prints only new text, never draws the status while text streams", () => {
    const { reply, writes, rows, output } = turn();
    reply.progress({ state: "waiting" });
    reply.progress({ state: "thinking", step: 1 });
    expect(writes.join("")).toMatch(/thinking/);
    writes.length = 0;
    reply.answer("Hello");
    // The status row is erased, then the prefix and the text.
    expect(writes.join("")).toBe("\r\x1b[2Kbot> Hello");
    writes.length = 0;
    reply.answer("Hello, **world**");
    reply.answer("Hello, **world**! How");
    expect(writes.join("")).toBe(", world! How");
    writes.length = 0;
    // No frame while the text is on the row: not on the timer, not on a resize, not for other progress.
    vi.advanceTimersByTime(2_000);
    output.emit("resize");
    reply.progress({ state: "thinking", step: 2 });
    expect(writes).toEqual([]);
    reply.finish("Hello, **world**! How are you?");
    expect(writes.join("")).toBe(" are you?\n\n");
    expect(rows()).toEqual(["bot> Hello, world! How are you?", "", ""]);
  });

  it("text taken back for a tool step: the row is ended, the status comes back with the tool, the answer follows", () => {
    const { reply, rows } = turn();
    reply.progress({ state: "thinking", step: 1 });
    reply.answer("Let me look at the files.");
    reply.answer("");
    reply.progress({ state: "tool", tool: "shell.exec" });
    vi.advanceTimersByTime(350);
    const during = rows();
    expect(during[0]).toBe("bot> Let me look at the files.");
    expect(during[1]).toMatch(/running shell\.exec/);
    expect(during.slice(1).filter((row) => SPINNER.test(row))).toHaveLength(1);
    reply.progress({ state: "thinking", step: 2 });
    reply.answer("There are three files.");
    reply.finish("There are three files.");
    // The status row became the answer's row: no frame is left anywhere.
    expect(rows()).toEqual(["bot> Let me look at the files.", "bot> There are three files.", "", ""]);
  });

  it("wraps CJK and long words as it streams, the same as a reply printed whole", () => {
    const answer = `部署完成了，服务已经重新启动，日志里没有错误。地址是 https://example.com/${"x".repeat(50)} 请检查。`;
    const streamed = turn(30);
    streamed.reply.progress({ state: "thinking", step: 1 });
    for (let end = 2; end < answer.length; end += 3) streamed.reply.answer(answer.slice(0, end).trim());
    streamed.reply.finish(answer);
    const whole = turn(30);
    whole.reply.progress({ state: "thinking", step: 1 });
    whole.reply.finish(answer);
    expect(streamed.rows()).toEqual(whole.rows());
    const rows = streamed.rows();
    expect(
      rows.every(
        (row) => [...row].reduce((sum, ch) => sum + (/[\u2e80-\u9fff\uff00-\uff60]/.test(ch) ? 2 : 1), 0) <= 29,
      ),
    ).toBe(true);
    expect(rows.join(" ").replaceAll(" ", "")).toBe(`bot>${answer.replaceAll(" ", "")}`);
  });

  it("a final answer that differs from what streamed is printed in full below it", () => {
    const { reply, rows } = turn();
    reply.progress({ state: "thinking", step: 1 });
    reply.answer("The build");
    reply.answer("The build passed");
    reply.finish("I ran out of steps.\n\nThe build passed, the deploy did not run.");
    expect(rows()).toEqual([
      "bot> The build passed",
      "bot> I ran out of steps.",
      "",
      "The build passed, the deploy did not",
      "run.",
      "",
      "",
    ]);
  });

  it("a cut-off note after the streamed text is added below it, not printed twice", () => {
    const { reply, rows } = turn(80);
    reply.progress({ state: "thinking", step: 1 });
    reply.answer("Half of the answer");
    reply.finish("Half of the answer\n\n(The answer was cut off.)");
    expect(rows()).toEqual(["bot> Half of the answer", "", "(The answer was cut off.)", "", ""]);
  });

  it("a cancel while text streams ends the row before the status says so; an error ends it too", () => {
    const { reply, rows } = turn();
    reply.progress({ state: "thinking", step: 1 });
    reply.answer("Working on");
    reply.progress({ state: "cancelling" });
    expect(rows()[0]).toBe("bot> Working on");
    expect(rows()[1]).toMatch(/cancelling/);
    reply.finish("(Cancelled.)");
    expect(rows()).toEqual(["bot> Working on", "bot> (Cancelled.)", "", ""]);

    const failing = turn();
    failing.reply.progress({ state: "thinking", step: 1 });
    failing.reply.answer("Working on");
    failing.reply.fail("error: model call failed");
    expect(failing.rows()).toEqual(["bot> Working on", "error: model call failed", ""]);
  });

  it("a retry message longer than the terminal keeps to one row, frame after frame", () => {
    const { reply, rows } = turn(40);
    reply.progress({ state: "thinking", step: 1 });
    for (let attempt = 1; attempt <= 3; attempt += 1) {
      reply.progress({
        state: "retrying",
        attempt,
        maxAttempts: 3,
        reason: "upstream overloaded ".repeat(10),
        kind: "server",
      } as never);
      vi.advanceTimersByTime(1_000);
    }
    expect(rows()).toHaveLength(1);
    reply.answer("Recovered.");
    reply.finish("Recovered.");
    expect(rows()).toEqual(["bot> Recovered.", "", ""]);
  });
});

/** The console channel over a fake terminal, with the lines typed and a handler. */
async function runConsole(options: {
  lines: string[];
  handler: MessageHandler;
  interactive: boolean;
  columns?: number;
  stream?: boolean;
  /** The output is a terminal (false: `laoding chat > file` typed at a terminal). */
  tty?: boolean;
}) {
  const terminal = fakeTerminal(options.columns ?? 40, options.tty ?? true);
  const input = new PassThrough();
  const channel = createConsoleChannel({
    input,
    output: terminal.output,
    agentId: "main",
    interactive: options.interactive,
    messageCap: { maxChars: 4000, reply: (chars) => `too long: ${chars}` },
    locale: "en",
    ...(options.stream === undefined ? {} : { stream: options.stream }),
  });
  const done = channel.run(options.handler);
  input.end(options.lines.map((line) => `${line}\n`).join(""));
  await done;
  return terminal;
}

/** A turn as the agent runs it: thinking, text that turns out to precede a tool call, the tool, then the answer streaming. */
const scripted =
  (final: string, streamed: string): MessageHandler =>
  async (_message, control?: TurnControl) => {
    const tick = () => new Promise((resolve) => setImmediate(resolve));
    control?.onProgress?.({ state: "thinking", step: 1 });
    control?.onAnswer?.("让我先看看");
    control?.onAnswer?.("让我先看看文件。");
    control?.onAnswer?.("");
    control?.onProgress?.({ state: "tool", tool: "shell.exec" });
    await tick();
    control?.onProgress?.({ state: "thinking", step: 2 });
    for (let end = 1; end < streamed.length + 4; end += 4) {
      control?.onAnswer?.(streamed.slice(0, end).trim());
      await tick();
    }
    return final;
  };

describe("the console channel streams on a terminal only", () => {
  const answer = `**结论**：共有 3 个文件，最大的是 \`data/${"very-long-file-name-".repeat(3)}.csv\`，其余都很小。`;

  it("interactive: the answer streams wrapped, the tool step in between, and the final answer equal to it closes the reply", async () => {
    const terminal = await runConsole({ lines: ["看看文件"], handler: scripted(answer, answer), interactive: true });
    const rows = terminal.rows().filter((row) => row.trim() !== "" && !row.startsWith("you>"));
    expect(rows[0]).toBe("bot> 让我先看看文件。");
    expect(rows.slice(1).join("")).toBe(
      `bot> 结论：共有 3 个文件，最大的是 data/${"very-long-file-name-".repeat(3)}.csv，其余都很小。`.replace(
        / (?=data)/,
        "",
      ),
    );
    expect(rows.every((row) => !SPINNER.test(row))).toBe(true);
    // Printed once: the final answer did not repeat what streamed.
    expect(rows.join("").match(/其余都很小/g)).toHaveLength(1);
  });

  it("interactive: a final answer different from the streamed one is printed in full after it", async () => {
    const terminal = await runConsole({
      lines: ["看看文件"],
      handler: scripted("Out of steps: 3 files found.", answer),
      interactive: true,
      columns: 80,
    });
    const rows = terminal.rows().filter((row) => row.trim() !== "" && !row.startsWith("you>"));
    expect(rows.at(-1)).toBe("bot> Out of steps: 3 files found.");
    expect(rows.at(-2)).toMatch(/小。$/);
    expect(rows.join("").match(/其余都很小/g)).toHaveLength(1);
  });

  it("with streaming off, or output to a file, the same reply is printed whole once the turn ends", async () => {
    const streamed = await runConsole({ lines: ["看看文件"], handler: scripted(answer, answer), interactive: true });
    const answerRows = (rows: string[]) => rows.slice(rows.findIndex((row) => row.startsWith("bot> 结论")));
    for (const options of [{ stream: false }, { tty: false }]) {
      const whole = await runConsole({
        lines: ["看看文件"],
        handler: scripted(answer, answer),
        interactive: true,
        ...options,
      });
      expect(answerRows(whole.rows())).toEqual(answerRows(streamed.rows()));
      expect(whole.written()).not.toMatch(/让我先看看/);
    }
  });

  it("piped: one final reply per line, exactly as returned, no status and no streaming", async () => {
    const terminal = await runConsole({
      lines: ["one", "two"],
      handler: scripted(answer, answer),
      interactive: false,
    });
    expect(terminal.written()).toBe(`${answer}\n${answer}\n`);
  });
});
