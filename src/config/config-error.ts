/** A configuration problem an operator can fix; the CLI prints message and hint, no stack. */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
  readonly hint: string | undefined;

  constructor(message: string, options: { hint?: string; cause?: unknown } = {}) {
    super(options.hint ? `${message}. ${options.hint}` : message, { cause: options.cause });
    this.hint = options.hint;
  }
}
