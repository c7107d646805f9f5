/**
 * An agent's always-on rules (docs/admin-api.md, "Rules"): the active ones with Remove,
 * and the candidates `laoding rules propose` shows, each with its evidence, an optional
 * shorter wording and Accept. The limits (rules per agent, characters per rule) come from
 * the server's answer and are shown; the server enforces them and its refusals are shown.
 */
import type { Rule, RuleCandidate, RuleList } from "./api.js";
import { load, runAction, type ViewContext } from "./context.js";
import { formatTime, h, replaceChildren } from "./dom.js";
import { locale, t } from "./i18n.js";

export function rulesView(context: ViewContext, agentId: string): Promise<void> {
  return load(
    context,
    () => Promise.all([context.api.rules(agentId), context.api.ruleCandidates(agentId)]),
    ([list, candidates]) => renderRules(context, agentId, list, candidates),
  );
}

function renderRules(context: ViewContext, agentId: string, list: RuleList, candidates: RuleCandidate[]): void {
  const full = list.rules.length >= list.maxRules;
  const limits = { max: list.maxRules, chars: list.maxChars };
  replaceChildren(
    context.main,
    h("h1", {}, t("rules"), " · ", h("code", {}, agentId)),
    h("p", { class: "hint", id: "rules-limits" }, t("rulesHelp", limits)),
    h("h2", { id: "rules-count" }, t("activeRules", { count: list.rules.length, max: list.maxRules })),
    list.rules.length === 0
      ? h("p", { class: "rules-none" }, t("noRules"))
      : h(
          "table",
          { class: "cards rules" },
          h(
            "thead",
            {},
            h(
              "tr",
              {},
              [t("ruleId"), t("ruleText"), t("ruleSource"), t("ruleSince"), ""].map((label) => h("th", {}, label)),
            ),
          ),
          h(
            "tbody",
            {},
            list.rules.map((rule) => ruleRow(context, agentId, rule)),
          ),
        ),
    h("h2", {}, t("ruleCandidates")),
    h("p", { class: "hint" }, t("candidatesHelp", limits)),
    full && candidates.length > 0 ? h("p", { class: "notice", id: "rules-full" }, t("rulesFull", limits)) : null,
    candidates.length === 0
      ? h("p", { class: "candidates-none" }, t("noCandidates"))
      : h(
          "table",
          { class: "cards candidates" },
          h(
            "thead",
            {},
            h(
              "tr",
              {},
              [t("candidate"), t("ruleText"), t("evidence"), t("shorterWording")].map((label) => h("th", {}, label)),
            ),
          ),
          h(
            "tbody",
            {},
            candidates.map((candidate, index) => candidateRow(context, agentId, candidate, index, list, full)),
          ),
        ),
  );
}

function ruleRow(context: ViewContext, agentId: string, rule: Rule): HTMLTableRowElement {
  const remove = h("button", { type: "button", class: "danger", "data-remove": rule.id }, t("removeRule"));
  remove.addEventListener("click", () => {
    if (!confirm(t("confirmRemoveRule", { id: rule.id, text: rule.text }))) return;
    void runAction(context, remove, async () => {
      await context.api.removeRule(agentId, rule.id);
      await rulesView(context, agentId);
      return t("ruleRemoved", { id: rule.id });
    });
  });
  return h(
    "tr",
    { "data-rule": rule.id },
    h("td", { "data-label": t("ruleId"), class: "num" }, rule.id),
    h("td", { "data-label": t("ruleText"), class: "rule-text" }, rule.text),
    h("td", { "data-label": t("ruleSource") }, rule.source ? h("code", {}, rule.source) : "-"),
    h("td", { "data-label": t("ruleSince") }, formatTime(rule.createdAt, locale())),
    h("td", {}, remove),
  );
}

function candidateRow(
  context: ViewContext,
  agentId: string,
  candidate: RuleCandidate,
  index: number,
  list: RuleList,
  full: boolean,
): HTMLTableRowElement {
  const fieldId = `rule-text-${index}`;
  const counterId = `${fieldId}-count`;
  const field = h("textarea", {
    id: fieldId,
    rows: 2,
    class: "rule-wording",
    placeholder: candidate.text,
    "aria-describedby": counterId,
  });
  const counter = h("small", { id: counterId, class: "counter" });
  const count = () => {
    const length = [...field.value.replace(/\s+/g, " ").trim()].length;
    const over = length > list.maxChars;
    counter.textContent = t("charCount", { count: length, max: list.maxChars });
    counter.classList.toggle("error", over);
  };
  field.addEventListener("input", count);
  count();
  const accept = h(
    "button",
    { type: "button", class: "primary", "data-accept": candidate.id, disabled: full },
    t("acceptRule"),
  );
  accept.addEventListener("click", () => {
    const wording = field.value.trim();
    void runAction(context, accept, async () => {
      const rule = await context.api.acceptRule(agentId, candidate.id, wording === "" ? undefined : wording);
      await rulesView(context, agentId);
      return t("ruleAccepted", { id: rule.id, text: rule.text });
    });
  });
  return h(
    "tr",
    { "data-candidate": candidate.id },
    h("td", { "data-label": t("candidate") }, h("code", {}, candidate.id)),
    h("td", { "data-label": t("ruleText"), class: "rule-text" }, candidate.text),
    h("td", { "data-label": t("evidence"), class: "evidence" }, candidate.evidence),
    h(
      "td",
      { "data-label": t("shorterWording") },
      h("label", { for: fieldId, class: "sr-only" }, t("shorterWordingFor", { id: candidate.id })),
      field,
      counter,
      h("div", { class: "actions" }, accept),
    ),
  );
}
