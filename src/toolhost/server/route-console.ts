/**
 * In the toolhost child, stdout carries protocol bytes only. This routes every console
 * method to stderr; call it before anything else can print.
 */
export function routeConsoleToStderr(stderr: NodeJS.WritableStream = process.stderr): void {
  const write = (...args: unknown[]) => {
    stderr.write(`${args.map((arg) => (typeof arg === "string" ? arg : safeInspect(arg))).join(" ")}\n`);
  };
  for (const method of ["log", "info", "debug", "warn", "error", "dir", "trace", "table"] as const) {
    (console as unknown as Record<string, unknown>)[method] = write;
  }
}

function safeInspect(value: unknown): string {
  try {
    return typeof value === "object" && value !== null ? JSON.stringify(value) : String(value as string);
  } catch {
    return "[unprintable]";
  }
}
