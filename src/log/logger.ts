/**
 * The process logger: pino JSON on stderr (pretty on a TTY). Secrets are redacted by
 * construction: every line, wherever it goes (stderr, the log file, the terminal notice),
 * passes the redactor (redact.ts: configured secret values and token-shaped text), errors
 * under `err` are copied through it field by field, and secret variables' keys are
 * redacted by path.
 */
import { pino, type Logger, type LoggerOptions } from "pino";
import { SECRET_VARIABLES } from "../config/variables.js";
import { createRedactor, REDACTED } from "./redact.js";

export type { Logger } from "pino";

export type LoggerSetup = {
  level: string;
  /** Secret values to scrub from every line (API keys, bot tokens, admin token). */
  secrets: string[];
  /** Where lines go; default stderr (fd 2). Tests pass a stream to read them. */
  destination?: NodeJS.WritableStream;
  pretty?: boolean;
  /**
   * While a person chats on the terminal: every line goes to this file, and each warning
   * or error becomes one short notice on `notices` (never a JSON line or a stack).
   */
  file?: { sink: { write(line: string): boolean }; notices: NodeJS.WritableStream; noticeWords?: NoticeWords };
  base?: Record<string, unknown>;
};

export function createLogger(setup: LoggerSetup): Logger {
  const redactor = createRedactor(setup.secrets);
  const options: LoggerOptions = {
    level: setup.level,
    base: { pid: process.pid, ...setup.base },
    redact: {
      paths: SECRET_VARIABLES.flatMap((key) => [key, `*.${key}`, `config.${key}`]),
      censor: REDACTED,
    },
    // An SDK error carries its request (URL, headers, body): copied with the secrets out,
    // and without the sockets and agents pino's own serializer would walk into.
    serializers: { err: (error: unknown) => redactor.redactError(error) },
    hooks: {
      // Redacting the serialised line catches secrets inside messages, errors and nested
      // objects alike, whatever the key is called.
      streamWrite: (line: string) => redactor.redact(line),
    },
  };
  if (setup.file) {
    const streams = pino.multistream([
      { level: setup.level as pino.Level, stream: setup.file.sink },
      { level: "warn", stream: noticeStream(setup.file.notices, setup.file.noticeWords ?? ENGLISH_NOTICES) },
    ]);
    return pino(options, streams);
  }
  const destination =
    setup.destination ?? ((setup.pretty ?? process.stderr.isTTY) ? prettyStderr() : pino.destination(2));
  return pino(options, destination as pino.DestinationStream);
}

/** One text with `secrets` and token-shaped text redacted (for reports printed once, such as the doctor's). */
export function scrub(text: string, secrets: string[]): string {
  return createRedactor(secrets).redact(text);
}

/**
 * How a notice is worded in the terminal's language (the bot's locale tables; the log
 * module takes the words, not the tables, so it stays below agent/ and channels/). The
 * log message itself stays as the log file has it: `laoding logs` finds it by that text.
 */
export type NoticeWords = {
  warning: string;
  error: string;
  line(level: string, message: string, where: string): string;
};

const ENGLISH_NOTICES: NoticeWords = {
  warning: "warning",
  error: "error",
  line: (level, message, where) => `${level}: ${message} (details: ${where})`,
};

/** One line per warning or error, with the trace id to look it up by. */
function noticeStream(output: NodeJS.WritableStream, words: NoticeWords): { write(line: string): boolean } {
  return {
    write(line) {
      try {
        const entry = JSON.parse(line) as { level?: number; msg?: string; traceId?: string };
        const label = (entry.level ?? 40) >= 50 ? words.error : words.warning;
        const where = entry.traceId ? `laoding logs --trace ${entry.traceId}` : "laoding logs";
        // Erase a status line the console may be drawing, then say it in one line.
        output.write(`\r\x1b[2K${words.line(label, entry.msg ?? "(no message)", where)}\n`);
      } catch {
        output.write(line);
      }
      return true;
    },
  };
}

function prettyStderr(): pino.DestinationStream {
  return pino.transport({
    target: "pino-pretty",
    options: { destination: 2, colorize: true, translateTime: "SYS:HH:MM:ss" },
  }) as pino.DestinationStream;
}

/** Logs with the ids of the message that caused the work. */
export function childFor(logger: Logger, ids: { traceId?: string; agentId?: string; sessionKey?: string }): Logger {
  return logger.child(Object.fromEntries(Object.entries(ids).filter(([, value]) => value !== undefined)));
}
