/**
 * The process logger: pino JSON on stderr (pretty on a TTY). Secrets are redacted by
 * construction: every value of a variable marked `secret` in the config table is
 * replaced wherever it appears in a log line, and the variables' keys are redacted by path.
 */
import { pino, type Logger, type LoggerOptions } from "pino";
import { SECRET_VARIABLES } from "../config/variables.js";

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
  file?: { sink: { write(line: string): boolean }; notices: NodeJS.WritableStream };
  base?: Record<string, unknown>;
};

const REDACTED = "[redacted]";

export function createLogger(setup: LoggerSetup): Logger {
  const secrets = setup.secrets.filter((secret) => secret.length >= 4);
  const options: LoggerOptions = {
    level: setup.level,
    base: { pid: process.pid, ...setup.base },
    redact: {
      paths: SECRET_VARIABLES.flatMap((key) => [key, `*.${key}`, `config.${key}`]),
      censor: REDACTED,
    },
    hooks: secrets.length === 0 ? {} : {
      // Scrubbing the serialised line catches secrets inside messages, errors and
      // nested objects alike, whatever the key is called.
      streamWrite: (line: string) => scrub(line, secrets),
    },
  };
  if (setup.file) {
    const streams = pino.multistream([
      { level: setup.level as pino.Level, stream: setup.file.sink },
      { level: "warn", stream: noticeStream(setup.file.notices) },
    ]);
    return pino(options, streams);
  }
  const destination = setup.destination ?? (setup.pretty ?? process.stderr.isTTY ? prettyStderr() : pino.destination(2));
  return pino(options, destination as pino.DestinationStream);
}

export function scrub(text: string, secrets: string[]): string {
  let result = text;
  for (const secret of secrets) {
    if (result.includes(secret)) result = result.split(secret).join(REDACTED);
    // Secrets in JSON lines are escaped the way JSON escapes them.
    const escaped = JSON.stringify(secret).slice(1, -1);
    if (escaped !== secret && result.includes(escaped)) result = result.split(escaped).join(REDACTED);
  }
  return result;
}

/** One line per warning or error, with the trace id to look it up by. */
function noticeStream(output: NodeJS.WritableStream): { write(line: string): boolean } {
  return {
    write(line) {
      try {
        const entry = JSON.parse(line) as { level?: number; msg?: string; traceId?: string };
        const label = (entry.level ?? 40) >= 50 ? "error" : "warning";
        const where = entry.traceId ? `laoding logs --trace ${entry.traceId}` : "laoding logs";
        // Erase a status line the console may be drawing, then say it in one line.
        output.write(`\r\x1b[2K${label}: ${entry.msg ?? "(no message)"} (details: ${where})\n`);
      } catch {
        output.write(line);
      }
      return true;
    },
  };
}

function prettyStderr(): pino.DestinationStream {
  return pino.transport({ target: "pino-pretty", options: { destination: 2, colorize: true, translateTime: "SYS:HH:MM:ss" } }) as pino.DestinationStream;
}

/** Logs with the ids of the message that caused the work. */
export function childFor(logger: Logger, ids: { traceId?: string; agentId?: string; sessionKey?: string }): Logger {
  return logger.child(Object.fromEntries(Object.entries(ids).filter(([, value]) => value !== undefined)));
}
