/** What every view gets from the shell: the API, where to draw, and how to report. */
import { ApiError, type Api } from "./api.js";
import { h } from "./dom.js";
import { t } from "./i18n.js";

export type Status = {
  progress(message: string): void;
  ok(message: string): void;
  error(error: unknown): void;
};

export type ViewContext = {
  api: Api;
  main: HTMLElement;
  status: Status;
  navigate(hash: string): void;
  /** A view with unsaved edits registers a check; navigation asks before leaving it. */
  setUnsavedCheck(check: (() => boolean) | null): void;
};

export function describeError(error: unknown): string {
  if (error instanceof ApiError) return `${t("errorPrefix")}: ${error.message} (${error.code})`;
  return `${t("errorPrefix")}: ${error instanceof Error ? error.message : String(error)}`;
}

/**
 * Runs one action: the button is disabled and marked busy while it runs, the status line
 * says it is working, then what happened or what went wrong.
 */
export async function runAction(
  context: ViewContext,
  button: HTMLButtonElement | null,
  action: () => Promise<string | null>,
): Promise<boolean> {
  if (button) {
    button.disabled = true;
    button.setAttribute("aria-busy", "true");
  }
  context.status.progress(t("working"));
  try {
    const message = await action();
    context.status.ok(message ?? t("done"));
    return true;
  } catch (error) {
    context.status.error(error);
    return false;
  } finally {
    if (button) {
      button.disabled = false;
      button.removeAttribute("aria-busy");
    }
  }
}

/** Loads a view's data with a visible "loading" and an error with a retry button. */
export async function load<T>(
  context: ViewContext,
  fetcher: () => Promise<T>,
  render: (data: T) => void,
): Promise<void> {
  context.main.replaceChildren(h("p", { class: "loading", "aria-busy": "true" }, t("loading")));
  try {
    render(await fetcher());
  } catch (error) {
    context.status.error(error);
    context.main.replaceChildren(
      h("p", { class: "error", role: "alert" }, describeError(error)),
      h("button", { type: "button", onclick: () => void load(context, fetcher, render) }, t("retry")),
    );
  }
}
