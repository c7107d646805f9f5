/**
 * Capability-gap clusters with their drafts; a draft's SKILL.md can be read or the draft
 * retired. Environment failures (outages, grouped by cause) are shown apart: they are not
 * missing capabilities and are never drafted.
 */
import type { DraftRow, EnvironmentCluster, GapCluster, GapReport } from "./api.js";
import { load, runAction, type ViewContext } from "./context.js";
import { formatTime, h, replaceChildren } from "./dom.js";
import { locale, t, type MessageKey } from "./i18n.js";

/** The causes docs/gaps.md lists, in words; a cause not listed here is shown as it is. */
const CAUSE_WORDS: Record<string, MessageKey> = {
  "model-unavailable": "causeModelUnavailable",
  "model-rate-limited": "causeModelRateLimited",
  "model-timeout": "causeModelTimeout",
  "toolhost-unavailable": "causeToolhostUnavailable",
  "sandbox-unavailable": "causeSandboxUnavailable",
  "tool-timeout": "causeToolTimeout",
  "command-missing": "causeCommandMissing",
  "model-auth-failed": "causeModelAuthFailed",
  "model-bad-request": "causeModelBadRequest",
  "model-bad-response": "causeModelBadResponse",
  "mcp-unavailable": "causeMcpUnavailable",
  other: "causeOther",
};

export function causeWords(cause: string): string {
  const key = Object.hasOwn(CAUSE_WORDS, cause) ? CAUSE_WORDS[cause] : undefined;
  return key ? t(key) : cause;
}

export function gapsView(context: ViewContext, agentId: string, sinceHours?: number): Promise<void> {
  return load(
    context,
    () => context.api.gaps(agentId, sinceHours),
    (report) => renderGaps(context, agentId, report),
  );
}

function renderGaps(context: ViewContext, agentId: string, report: GapReport): void {
  const viewer = h("section", { class: "draft-viewer", hidden: true, tabindex: -1, "aria-live": "polite" });
  const reload = () => gapsView(context, agentId, report.sinceHours);
  const windowInput = h("input", {
    id: "gap-window",
    type: "number",
    min: 1,
    max: 87600,
    step: 1,
    value: report.sinceHours,
    class: "hours",
  });
  const windowForm = h(
    "form",
    { class: "toolbar" },
    h("label", { for: "gap-window" }, t("windowHours")),
    windowInput,
    h("button", { type: "submit" }, t("apply")),
  );
  windowForm.addEventListener("submit", (event) => {
    event.preventDefault();
    const hours = Number(windowInput.value);
    if (Number.isFinite(hours) && hours > 0) void gapsView(context, agentId, hours);
  });
  const draftActions = (draft: DraftRow | null) => {
    if (!draft?.skillName) return h("span", { class: "muted" }, t("noDraft"));
    const name = draft.skillName;
    const live = draft.status !== "rejected";
    const open = h("button", { type: "button", "data-draft": name }, t("openDraft"));
    open.addEventListener("click", () => {
      void runAction(context, open, async () => {
        const detail = await context.api.readDraft(agentId, name);
        const close = h("button", { type: "button" }, t("close"));
        close.addEventListener("click", () => {
          viewer.hidden = true;
          open.focus();
        });
        replaceChildren(
          viewer,
          h("h2", {}, "SKILL.md · ", h("code", {}, detail.name)),
          h("p", { class: "file" }, detail.path),
          h("pre", { class: "skill" }, detail.content),
          close,
        );
        viewer.hidden = false;
        viewer.focus();
        return null;
      });
    });
    const retire = h("button", { type: "button", class: "danger", "data-retire": name }, t("retire"));
    retire.addEventListener("click", () => {
      if (!confirm(t("confirmRetire", { name }))) return;
      void runAction(context, retire, async () => {
        const result = await context.api.retireDraft(agentId, name);
        await reload();
        return t("retired", { name: result.name, path: result.archivedTo ?? "-" });
      });
    });
    return h(
      "div",
      { class: "actions" },
      h("code", {}, name),
      " ",
      h("span", { class: `badge ${draft.status}` }, draft.status),
      live ? [open, retire] : null,
    );
  };
  const clusterRow = (cluster: GapCluster) =>
    h(
      "tr",
      { "data-intent": cluster.intentKey },
      h("td", { "data-label": t("intent") }, h("code", {}, cluster.intentKey)),
      h("td", { "data-label": t("reason") }, `${cluster.reason} / ${cluster.gapClass}`),
      h("td", { "data-label": t("count"), class: "num" }, cluster.count),
      h("td", { "data-label": t("sessions"), class: "num" }, cluster.sessions),
      h("td", { "data-label": t("lastSeen") }, formatTime(cluster.lastSeen, locale())),
      h(
        "td",
        { "data-label": t("samples") },
        h(
          "ul",
          { class: "samples" },
          cluster.samples.map((sample) => h("li", {}, sample)),
        ),
      ),
      h("td", { "data-label": t("draft") }, draftActions(cluster.draft)),
    );
  replaceChildren(
    context.main,
    h("h1", {}, t("gaps"), " · ", h("code", {}, agentId)),
    windowForm,
    report.clusters.length === 0
      ? h("p", {}, t("noClusters", { hours: report.sinceHours }))
      : h(
          "table",
          { class: "cards gaps" },
          h(
            "thead",
            {},
            h(
              "tr",
              {},
              [t("intent"), t("reason"), t("count"), t("sessions"), t("lastSeen"), t("samples"), t("draft")].map(
                (label) => h("th", {}, label),
              ),
            ),
          ),
          h("tbody", {}, report.clusters.map(clusterRow)),
        ),
    environmentSection(report),
    viewer,
    report.drafts.length === 0
      ? null
      : [
          h("h2", {}, t("allDrafts")),
          h(
            "table",
            { class: "cards drafts" },
            h(
              "thead",
              {},
              h(
                "tr",
                {},
                [t("intent"), t("status"), t("reason"), t("draft")].map((label) => h("th", {}, label)),
              ),
            ),
            h(
              "tbody",
              {},
              report.drafts.map((draft) =>
                h(
                  "tr",
                  {},
                  h("td", { "data-label": t("intent") }, h("code", {}, draft.intentKey)),
                  h("td", { "data-label": t("status") }, draft.status),
                  h("td", { "data-label": t("reason") }, draft.reason ?? ""),
                  h("td", { "data-label": t("draft") }, draftActions(draft)),
                ),
              ),
            ),
          ),
        ],
  );
}

/** The environment section; nothing from a server whose report has no `environment` yet. */
function environmentSection(report: GapReport): HTMLElement[] | null {
  const environment = report.environment;
  if (!Array.isArray(environment)) return null;
  const row = (cluster: EnvironmentCluster) =>
    h(
      "tr",
      { "data-cause": cluster.cause },
      h(
        "td",
        { "data-label": t("cause") },
        h("strong", { class: "cause" }, causeWords(cluster.cause)),
        " ",
        h("code", {}, cluster.cause),
      ),
      h("td", { "data-label": t("count"), class: "num" }, cluster.count),
      h("td", { "data-label": t("firstSeen") }, formatTime(cluster.firstSeenAt, locale())),
      h("td", { "data-label": t("lastSeen") }, formatTime(cluster.lastSeenAt, locale())),
      h("td", { "data-label": t("lastDetail"), class: "detail" }, cluster.lastDetail ?? ""),
    );
  return [
    h("h2", { id: "environment" }, t("environment")),
    h("p", { class: "hint" }, t("environmentHelp")),
    environment.length === 0
      ? h("p", { class: "environment-none" }, t("noEnvironment", { hours: report.sinceHours }))
      : h(
          "table",
          { class: "cards environment", "aria-labelledby": "environment" },
          h(
            "thead",
            {},
            h(
              "tr",
              {},
              [t("cause"), t("count"), t("firstSeen"), t("lastSeen"), t("lastDetail")].map((label) =>
                h("th", {}, label),
              ),
            ),
          ),
          h("tbody", {}, environment.map(row)),
        ),
  ];
}
