/**
 * An agent's MCP servers, read-only: what agents.json configures (command or URL host,
 * never an env or header value) with the live state the bot's toolhost reports, each
 * server's tools behind a disclosure. Changing servers is agents.json's job, not the page's.
 */
import type { AgentMcp, McpServer } from "./api.js";
import { load, type ViewContext } from "./context.js";
import { formatTime, h, replaceChildren } from "./dom.js";
import { locale, t, type MessageKey } from "./i18n.js";

const STATE_WORDS: Record<string, MessageKey> = {
  "not started": "mcpStateNotStarted",
  idle: "mcpStateIdle",
  starting: "mcpStateStarting",
  running: "mcpStateRunning",
  backoff: "mcpStateBackoff",
  failed: "mcpStateFailed",
  stopped: "mcpStateStopped",
};

export function mcpView(context: ViewContext, agentId: string): Promise<void> {
  return load(
    context,
    () => context.api.mcp(agentId),
    (view) => renderMcp(context, agentId, view),
  );
}

function renderMcp(context: ViewContext, agentId: string, view: AgentMcp): void {
  const notice = !view.botAttached ? t("mcpDetached") : !view.running ? t("mcpNotRunning") : null;
  replaceChildren(
    context.main,
    h("h1", {}, t("mcpServers"), " · ", h("code", {}, agentId)),
    view.servers.length === 0
      ? h("p", { class: "mcp-none" }, t("mcpNone"))
      : [
          notice ? h("p", { class: "notice", id: "mcp-notice" }, notice) : null,
          h(
            "table",
            { class: "cards mcp" },
            h(
              "thead",
              {},
              h(
                "tr",
                {},
                [t("mcpServer"), t("mcpState"), t("mcpTools"), t("mcpRestarts"), t("mcpLastError")].map((label) =>
                  h("th", {}, label),
                ),
              ),
            ),
            h("tbody", {}, view.servers.map(serverRow)),
          ),
        ],
  );
}

function serverRow(server: McpServer): HTMLTableRowElement {
  const where = server.configured.command ?? server.configured.urlHost ?? "";
  const stateWord = STATE_WORDS[server.state];
  return h(
    "tr",
    { "data-server": server.name },
    h(
      "td",
      { "data-label": t("mcpServer") },
      h("strong", {}, server.name),
      " ",
      h("span", { class: "badge" }, server.transport),
      h("div", { class: "file" }, h("code", {}, where)),
    ),
    h(
      "td",
      { "data-label": t("mcpState") },
      h(
        "span",
        { class: `badge mcp-state ${server.state.replace(/\s+/g, "-")}` },
        stateWord ? t(stateWord) : server.state,
      ),
    ),
    h("td", { "data-label": t("mcpTools"), class: "mcp-tools" }, toolList(server)),
    h("td", { "data-label": t("mcpRestarts"), class: "mcp-restarts" }, server.restarts),
    h(
      "td",
      { "data-label": t("mcpLastError"), class: "mcp-error" },
      server.lastError
        ? [
            h("span", { class: "error" }, server.lastError),
            server.lastErrorAt === undefined
              ? null
              : h("div", { class: "muted" }, formatTime(server.lastErrorAt, locale())),
          ]
        : h("span", { class: "muted" }, "-"),
    ),
  );
}

/** The count, and the tools' names (with their descriptions' first lines) behind a disclosure. */
function toolList(server: McpServer): HTMLElement {
  if (server.tools.length === 0) return h("span", { class: "muted" }, t("mcpToolCount", { count: 0 }));
  return h(
    "details",
    {},
    h("summary", {}, t("mcpToolCount", { count: server.tools.length })),
    h(
      "ul",
      { class: "samples" },
      server.tools.map((tool) =>
        h(
          "li",
          {},
          h("code", {}, tool.name),
          tool.description ? [" ", h("span", { class: "muted" }, tool.description.split("\n")[0] ?? "")] : null,
        ),
      ),
    ),
  );
}
