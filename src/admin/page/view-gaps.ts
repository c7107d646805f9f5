/** Capability-gap clusters with their drafts; a draft's SKILL.md can be read or the draft retired. */
import type { DraftRow, GapCluster, GapReport } from "./api.js";
import { load, runAction, type ViewContext } from "./context.js";
import { formatTime, h, replaceChildren } from "./dom.js";
import { locale, t } from "./i18n.js";

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
