/**
 * The admin page's shell: sign-in, the header (navigation, language, sign-out), the status
 * line every action reports to, and the hash router. The token lives in sessionStorage
 * only: never in a URL (the router uses the hash for views, never for the token), never
 * logged, gone on sign-out or when the tab closes.
 */
import { ApiError, createApi } from "./api.js";
import { describeError, type Status, type ViewContext } from "./context.js";
import { h } from "./dom.js";
import { locale, setLocale, t, type Locale } from "./i18n.js";
import { agentsView } from "./view-agents.js";
import { editorView } from "./view-editor.js";
import { gapsView } from "./view-gaps.js";
import { LESSON_STATUSES, lessonsView } from "./view-lessons.js";
import { libraryView } from "./view-library.js";
import { mcpView } from "./view-mcp.js";
import { rulesView } from "./view-rules.js";

const TOKEN_KEY = "laoding-admin-token";
const root = document.getElementById("app") as HTMLElement;
const api = createApi(() => sessionStorage.getItem(TOKEN_KEY));
let unsavedCheck: (() => boolean) | null = null;
let currentHash = location.hash;
let restoringHash = false;

const statusLine = h("div", { id: "status", class: "status", role: "status", "aria-live": "polite" });
const status: Status = {
  progress: (message) => show("progress", message),
  ok: (message) => show("ok", message),
  error: (error) => {
    // A token the server refuses (rotated, or mistyped): back to the sign-in form, which says so.
    if (error instanceof ApiError && error.code === "UNAUTHORIZED") return signOut(t("wrongToken"));
    show("error", describeError(error));
  },
};

function show(kind: "progress" | "ok" | "error", message: string): void {
  statusLine.className = `status ${kind}`;
  statusLine.setAttribute("role", kind === "error" ? "alert" : "status");
  statusLine.textContent = message;
}

const main = h("main", { id: "main", tabindex: -1 });
const context: ViewContext = {
  api,
  main,
  status,
  navigate: (hash) => {
    location.hash = hash;
  },
  setUnsavedCheck: (check) => {
    unsavedCheck = check;
  },
};

function hasUnsaved(): boolean {
  return unsavedCheck?.() === true;
}

function signOut(message?: string): void {
  sessionStorage.removeItem(TOKEN_KEY);
  unsavedCheck = null;
  renderSignIn(message);
}

function renderSignIn(message?: string): void {
  const input = h("input", { id: "token", type: "password", autocomplete: "off", required: true, spellcheck: "false" });
  const error = h("p", { id: "sign-in-error", class: "error", role: "alert" }, message ?? "");
  const button = h("button", { type: "submit", class: "primary" }, t("signIn"));
  const form = h(
    "form",
    { class: "sign-in", "aria-labelledby": "sign-in-title" },
    h("h1", { id: "sign-in-title" }, t("signInTitle")),
    h("p", {}, t("signInHelp")),
    h("label", { for: "token" }, t("token")),
    input,
    button,
    error,
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const token = input.value.trim();
    if (!token) return;
    button.disabled = true;
    error.textContent = t("signingIn");
    sessionStorage.setItem(TOKEN_KEY, token);
    api.agents().then(
      () => renderApp(),
      (failure: unknown) => {
        button.disabled = false;
        if (failure instanceof ApiError && failure.code === "UNAUTHORIZED") {
          sessionStorage.removeItem(TOKEN_KEY);
          error.textContent = t("wrongToken");
          input.select();
        } else {
          sessionStorage.removeItem(TOKEN_KEY);
          error.textContent = describeError(failure);
        }
      },
    );
  });
  root.replaceChildren(
    h(
      "header",
      { class: "top" },
      h("span", { class: "brand" }, t("appTitle")),
      languageSwitch(() => renderSignIn(message)),
    ),
    form,
  );
  input.focus();
}

function languageSwitch(rerender: () => void): HTMLElement {
  const select = h(
    "select",
    { id: "locale", "aria-label": t("language") },
    (["zh", "en"] as const).map((value) =>
      h("option", { value, selected: value === locale() }, value === "zh" ? "中文" : "English"),
    ),
  );
  select.addEventListener("change", () => {
    // Redrawing in the other language reloads the view: ask first when that would drop edits.
    if (hasUnsaved() && !confirm(t("unsaved"))) {
      select.value = locale();
      return;
    }
    setLocale(select.value as Locale);
    rerender();
  });
  return h("label", { class: "locale" }, h("span", { class: "sr-only" }, t("language")), select);
}

/** Moves focus to the content without touching the hash, which the router owns. */
function skipLink(): HTMLElement {
  const link = h("a", { href: "#main", class: "skip" }, t("skipToMain"));
  link.addEventListener("click", (event) => {
    event.preventDefault();
    main.focus();
  });
  return link;
}

function agentOfHash(): string | null {
  const match = /^#\/(?:library|gaps|lessons|rules|mcp)\/([^/]+)/.exec(location.hash);
  return match ? decodeURIComponent(match[1] as string) : null;
}

function renderApp(): void {
  const agent = agentOfHash();
  const link = (hash: string, label: string, active: boolean) =>
    h("a", { href: hash, "aria-current": active ? "page" : undefined }, label);
  const nav = h(
    "nav",
    { "aria-label": t("appTitle") },
    link("#/agents", t("agents"), agent === null),
    agent
      ? [
          link(
            `#/library/${encodeURIComponent(agent)}`,
            `${t("library")} · ${agent}`,
            location.hash.startsWith("#/library/"),
          ),
          link(`#/gaps/${encodeURIComponent(agent)}`, `${t("gaps")} · ${agent}`, location.hash.startsWith("#/gaps/")),
          link(
            `#/lessons/${encodeURIComponent(agent)}`,
            `${t("lessons")} · ${agent}`,
            location.hash.startsWith("#/lessons/"),
          ),
          link(
            `#/rules/${encodeURIComponent(agent)}`,
            `${t("rules")} · ${agent}`,
            location.hash.startsWith("#/rules/"),
          ),
          link(
            `#/mcp/${encodeURIComponent(agent)}`,
            `${t("mcpServers")} · ${agent}`,
            location.hash.startsWith("#/mcp/"),
          ),
        ]
      : null,
  );
  const signOutButton = h("button", { type: "button", id: "sign-out" }, t("signOut"));
  signOutButton.addEventListener("click", () => {
    if (hasUnsaved() && !confirm(t("unsaved"))) return;
    signOut();
  });
  root.replaceChildren(
    skipLink(),
    h(
      "header",
      { class: "top" },
      h("span", { class: "brand" }, t("appTitle")),
      nav,
      languageSwitch(renderApp),
      signOutButton,
    ),
    statusLine,
    main,
  );
  void route();
}

function route(): Promise<void> {
  unsavedCheck = null;
  const parts = location.hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent);
  const [view, agent, mode, file] = parts;
  if (!view || view === "agents") return agentsView(context);
  if (view === "library" && agent && !mode) return libraryView(context, agent);
  if (view === "library" && agent && mode === "new") return editorView(context, agent, null);
  if (view === "library" && agent && mode === "edit" && file) return editorView(context, agent, file);
  if (view === "gaps" && agent) return gapsView(context, agent);
  if (view === "lessons" && agent && !mode) return lessonsView(context, agent);
  if (view === "mcp" && agent && !mode) return mcpView(context, agent);
  if (view === "rules" && agent && !mode) return rulesView(context, agent);
  const status = LESSON_STATUSES.find((value) => value === mode);
  if (view === "lessons" && agent && status) return lessonsView(context, agent, status);
  main.replaceChildren(h("p", {}, t("notFoundView")), h("a", { href: "#/agents" }, t("agents")));
  return Promise.resolve();
}

window.addEventListener("hashchange", () => {
  if (restoringHash) {
    restoringHash = false;
    return;
  }
  if (hasUnsaved() && !confirm(t("unsaved"))) {
    // Stay: put the address back without leaving the editor.
    restoringHash = true;
    location.hash = currentHash;
    return;
  }
  currentHash = location.hash;
  if (sessionStorage.getItem(TOKEN_KEY)) renderApp();
});

window.addEventListener("beforeunload", (event) => {
  if (!hasUnsaved()) return;
  event.preventDefault();
  event.returnValue = "";
});

if (sessionStorage.getItem(TOKEN_KEY)) renderApp();
else renderSignIn();
