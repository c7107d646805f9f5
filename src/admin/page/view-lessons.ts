/**
 * The distillation loop's lessons of one agent: tabs by status, each lesson with its
 * counters and actions (pin/unpin, deprecate with a reason, restore), its history from the
 * memory ledger, and the effect report drawn as a chart.
 */
import type { EffectReport, LedgerEntry, Lesson, LessonEvidence, LessonStatus, Rate } from "./api.js";
import { load, runAction, type ViewContext } from "./context.js";
import { formatTime, h, replaceChildren } from "./dom.js";
import { effectChart } from "./effect-chart.js";
import { locale, t, type MessageKey } from "./i18n.js";

export const LESSON_STATUSES: readonly LessonStatus[] = ["draft", "active", "deprecated"];
const STATUS_LABEL: Record<LessonStatus, MessageKey> = {
  draft: "statusDraft",
  active: "statusActive",
  deprecated: "statusDeprecated",
};

export function lessonStatusLabel(status: LessonStatus): string {
  return t(STATUS_LABEL[status]);
}

export function lessonsView(context: ViewContext, agentId: string, status?: LessonStatus): Promise<void> {
  return load(
    context,
    () => Promise.all([context.api.lessons(agentId), context.api.effectReport(agentId)]),
    ([lessons, report]) => renderLessons(context, agentId, status, lessons, report),
  );
}

function renderLessons(
  context: ViewContext,
  agentId: string,
  status: LessonStatus | undefined,
  lessons: Lesson[],
  report: EffectReport,
): void {
  const base = `#/lessons/${encodeURIComponent(agentId)}`;
  const reload = () => lessonsView(context, agentId, status);
  /** After an action redraws the list, keyboard focus lands on the button that undoes it. */
  const changed = async (lesson: Lesson, undo: string, message: string) => {
    await reload();
    context.main.querySelector<HTMLElement>(`tr[data-lesson="${lesson.id}"] button[data-action="${undo}"]`)?.focus();
    return message;
  };
  const viewer = h("section", {
    class: "draft-viewer ledger-viewer",
    hidden: true,
    tabindex: -1,
    "aria-live": "polite",
  });
  const tab = (value: LessonStatus | undefined, label: string, count: number) =>
    h(
      "a",
      {
        href: value ? `${base}/${value}` : base,
        class: "button tab",
        "aria-current": value === status ? "page" : undefined,
        "data-status": value ?? "all",
      },
      `${label} (${count})`,
    );
  const shown = lessons.filter((lesson) => !status || lesson.status === status);

  const actions = (lesson: Lesson) => {
    const act = (label: string, kind: string, run: () => Promise<string | null>, danger = false) => {
      const button = h("button", { type: "button", "data-action": kind, class: danger ? "danger" : undefined }, label);
      button.addEventListener("click", () => void runAction(context, button, run));
      return button;
    };
    const history = act(t("history"), "history", async () => {
      const detail = await context.api.lesson(agentId, lesson.id);
      showHistory(viewer, history, lesson, detail.ledger);
      return null;
    });
    const pin = lesson.pinned
      ? act(
          t("unpin"),
          "unpin",
          async () => (
            await context.api.lessonAction(agentId, lesson.id, "unpin"),
            changed(lesson, "pin", t("unpinnedDone", { id: lesson.id }))
          ),
        )
      : act(
          t("pin"),
          "pin",
          async () => (
            await context.api.lessonAction(agentId, lesson.id, "pin"),
            changed(lesson, "unpin", t("pinnedDone", { id: lesson.id }))
          ),
        );
    const change =
      lesson.status === "deprecated"
        ? act(
            t("restore"),
            "restore",
            async () => (
              await context.api.lessonAction(agentId, lesson.id, "restore"),
              changed(lesson, "deprecate", t("restoredDone", { id: lesson.id }))
            ),
          )
        : act(
            t("deprecate"),
            "deprecate",
            async () => {
              const reason = prompt(t("deprecateReason", { id: lesson.id }));
              if (reason === null) return t("cancelled");
              if (!reason.trim()) throw new Error(t("reasonNeeded"));
              await context.api.deprecateLesson(agentId, lesson.id, reason.trim());
              return changed(lesson, "restore", t("deprecatedDone", { id: lesson.id }));
            },
            true,
          );
    return h("div", { class: "actions" }, history, pin, change);
  };

  const lessonRow = (lesson: Lesson) =>
    h(
      "tr",
      { "data-lesson": lesson.id, "data-status": lesson.status },
      h("td", { "data-label": t("lessonId") }, h("code", {}, lesson.id)),
      h(
        "td",
        { "data-label": t("summary") },
        lesson.summary,
        lesson.deprecatedReason
          ? h("div", { class: "muted" }, `${t("deprecatedBecause")}: ${lesson.deprecatedReason}`)
          : null,
      ),
      h("td", { "data-label": t("category") }, lesson.category),
      h(
        "td",
        { "data-label": t("status") },
        h("span", { class: `badge ${lesson.status}` }, lessonStatusLabel(lesson.status)),
        lesson.pinned ? [" ", h("span", { class: "badge pinned" }, t("pinned"))] : null,
      ),
      h("td", { "data-label": t("confidence"), class: "num" }, lesson.confidence.toFixed(2)),
      h(
        "td",
        { "data-label": t("tags") },
        lesson.tags.map((tag) => h("span", { class: "chip" }, tag)),
      ),
      h(
        "td",
        { "data-label": t("counters") },
        t("countersValue", {
          shown: lesson.injectedCount,
          cited: lesson.usageCount,
          support: lesson.supportCount,
          contra: lesson.contradictCount,
        }),
      ),
      h(
        "td",
        { "data-label": t("uses"), class: "uses" },
        usesText(report.lessons?.find((evidence) => evidence.id === lesson.id)),
      ),
      h("td", {}, actions(lesson)),
    );

  replaceChildren(
    context.main,
    h("h1", {}, t("lessons"), " · ", h("code", {}, agentId)),
    h(
      "nav",
      { class: "toolbar tabs", "aria-label": t("status") },
      tab(undefined, t("statusAll"), lessons.length),
      LESSON_STATUSES.map((value) =>
        tab(value, lessonStatusLabel(value), lessons.filter((lesson) => lesson.status === value).length),
      ),
    ),
    shown.length === 0
      ? h("p", {}, t("noLessons"))
      : h(
          "table",
          { class: "cards lessons" },
          h(
            "thead",
            {},
            h(
              "tr",
              {},
              [
                t("lessonId"),
                t("summary"),
                t("category"),
                t("status"),
                t("confidence"),
                t("tags"),
                t("counters"),
                t("uses"),
                "",
              ].map((label) => h("th", {}, label)),
            ),
          ),
          h("tbody", {}, shown.map(lessonRow)),
        ),
    viewer,
    h("h2", {}, t("effectReport")),
    h("p", { class: "hint" }, t("reportHelp")),
    h(
      "div",
      { class: "legend" },
      h("span", { class: "swatch treatment" }),
      t("treatment"),
      " ",
      h("span", { class: "swatch holdout" }),
      t("holdout"),
    ),
    h("figure", { class: "chart" }, effectChart(report)),
    h(
      "p",
      { class: "muted" },
      t("reportTotals", {
        created: report.created,
        promoted: report.promoted,
        deprecated: report.deprecated,
        calls: report.distillCalls,
        skipped: report.skipped,
        tokens: report.tokens,
        phantom: report.phantomCitations,
      }),
    ),
  );
}

/** A lesson's uses (tasks it was shown to that ended with an outcome) and their success against its holdout. */
function usesText(evidence: LessonEvidence | undefined): string {
  if (!evidence?.uses) return "-";
  const percent = (rate: Rate) => (rate.rate === null ? "-" : `${Math.round(rate.rate * 100)}%`);
  return t("usesValue", {
    uses: evidence.uses.n,
    successes: evidence.uses.successes,
    rate: percent(evidence.uses),
    holdout: evidence.tagHoldout ? percent(evidence.tagHoldout) : "-",
  });
}

function showHistory(viewer: HTMLElement, opener: HTMLButtonElement, lesson: Lesson, ledger: LedgerEntry[]): void {
  const close = h("button", { type: "button" }, t("close"));
  close.addEventListener("click", () => {
    viewer.hidden = true;
    opener.focus();
  });
  const statusChange = (entry: LedgerEntry) => {
    const before = entry.before?.status;
    const after = entry.after?.status;
    return before && after && before !== after ? `${before} → ${after}` : (after ?? "");
  };
  replaceChildren(
    viewer,
    h("h2", {}, t("historyOf", { id: lesson.id })),
    h("p", {}, lesson.summary),
    h(
      "table",
      { class: "cards ledger" },
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          [t("when"), t("action"), t("actor"), t("status"), t("reason")].map((label) => h("th", {}, label)),
        ),
      ),
      h(
        "tbody",
        {},
        ledger.map((entry) =>
          h(
            "tr",
            { "data-action": entry.action },
            h("td", { "data-label": t("when") }, formatTime(entry.createdAt, locale())),
            h("td", { "data-label": t("action") }, h("code", {}, entry.action)),
            h("td", { "data-label": t("actor") }, entry.actor),
            h("td", { "data-label": t("status") }, statusChange(entry)),
            h("td", { "data-label": t("reason") }, entry.reason ?? ""),
          ),
        ),
      ),
    ),
    close,
  );
  viewer.hidden = false;
  viewer.focus();
}
