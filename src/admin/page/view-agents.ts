/** Every agent with its library switch and counts; the switch flips at once. */
import type { AgentSummary } from "./api.js";
import { load, runAction, type ViewContext } from "./context.js";
import { h } from "./dom.js";
import { t } from "./i18n.js";

export function agentsView(context: ViewContext): Promise<void> {
  return load(
    context,
    () => context.api.agents(),
    (agents) => {
      context.main.replaceChildren(
        h("h1", {}, t("agents")),
        agents.length === 0
          ? h("p", {}, t("noAgents"))
          : h(
              "table",
              { class: "cards" },
              h(
                "thead",
                {},
                h(
                  "tr",
                  {},
                  h("th", {}, t("agentName")),
                  h("th", {}, t("libraryEnabled")),
                  h("th", {}, t("documents")),
                  h("th", {}, t("gapCount")),
                  h("th", {}, t("openClusters")),
                  h("th", {}, t("drafts")),
                  h("th", {}, t("lessons")),
                  h("th", {}, ""),
                ),
              ),
              h(
                "tbody",
                {},
                agents.map((agent) => agentRow(context, agent)),
              ),
            ),
      );
    },
  );
}

function agentRow(context: ViewContext, agent: AgentSummary): HTMLTableRowElement {
  const toggle = h("button", {
    type: "button",
    role: "switch",
    class: "switch",
    "data-agent": agent.id,
    "aria-label": `${t("libraryEnabled")}: ${agent.name}`,
  });
  const show = (enabled: boolean) => {
    toggle.setAttribute("aria-checked", String(enabled));
    toggle.textContent = enabled ? t("on") : t("off");
  };
  show(agent.libraryEnabled);
  toggle.addEventListener("click", () => {
    const wanted = toggle.getAttribute("aria-checked") !== "true";
    void runAction(context, toggle, async () => {
      const result = await context.api.setLibrary(agent.id, wanted);
      show(result.libraryEnabled);
      return t(result.libraryEnabled ? "switchedOn" : "switchedOff", { agent: agent.name });
    });
  });
  return h(
    "tr",
    { "data-agent": agent.id },
    h("td", { "data-label": t("agentName") }, h("strong", {}, agent.name), " ", h("code", {}, agent.id)),
    h("td", { "data-label": t("libraryEnabled") }, toggle),
    h("td", { "data-label": t("documents"), class: "num" }, agent.documentCount),
    h("td", { "data-label": t("gapCount"), class: "num" }, agent.gapCount),
    h("td", { "data-label": t("openClusters"), class: "num" }, agent.openClusterCount),
    h("td", { "data-label": t("drafts"), class: "num" }, agent.draftCount),
    h("td", { "data-label": t("lessons"), class: "lesson-counts" }, t("lessonCountsValue", agent.lessonCounts)),
    h(
      "td",
      {},
      h(
        "div",
        { class: "actions" },
        h("a", { href: `#/library/${encodeURIComponent(agent.id)}` }, t("openLibrary")),
        h("a", { href: `#/gaps/${encodeURIComponent(agent.id)}` }, t("openGaps")),
        h("a", { href: `#/lessons/${encodeURIComponent(agent.id)}` }, t("openLessons")),
        h("a", { href: `#/rules/${encodeURIComponent(agent.id)}` }, t("openRules")),
        h("a", { href: `#/mcp/${encodeURIComponent(agent.id)}` }, t("openMcp")),
      ),
    ),
  );
}
