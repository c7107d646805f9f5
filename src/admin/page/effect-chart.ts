/**
 * The effect report as an inline SVG chart: per row (overall, then each tag) the treatment
 * and holdout success rates as bars with their counts and each rate's 95% (Wilson) interval
 * as a whisker, and the difference with the report's 95% interval on a −100…+100 points axis. Rows with too few tasks say "insufficient data"
 * instead of drawing an interval. SVG attributes, not inline styles: the page's content
 * policy allows no style attributes; the colours come from style.css classes.
 */
import type { Comparison, EffectReport } from "./api.js";
import { t, type MessageKey } from "./i18n.js";

const SVG = "http://www.w3.org/2000/svg";
const ROW = 58;
const RATE_X = 140;
const RATE_W = 200;
const EFFECT_X = 420;
const EFFECT_W = 170;
const WIDTH = EFFECT_X + EFFECT_W + 10;

function el(
  tag: string,
  attributes: Record<string, string | number>,
  ...children: (SVGElement | string)[]
): SVGElement {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
  for (const child of children) node.append(child);
  return node;
}

const VERDICTS: Record<string, MessageKey> = {
  helps: "verdictHelps",
  hurts: "verdictHurts",
  "no clear effect": "verdictNoClear",
  "insufficient data": "verdictInsufficient",
};

export function verdictText(verdict: string): string {
  const key = VERDICTS[verdict];
  return key ? t(key) : verdict;
}

function percent(rate: number | null): string {
  return rate === null ? "–" : `${Math.round(rate * 100)}%`;
}

function points(value: number): string {
  const rounded = Math.round(value * 1000) / 10;
  return `${rounded >= 0 ? "+" : ""}${rounded}`;
}

/**
 * The Wilson score 95% interval of one arm's success rate: the report carries the interval of
 * the difference; this one only draws each bar's uncertainty (sound for small n, unlike ±1.96·se).
 */
export function wilsonInterval(successes: number, n: number): [number, number] | null {
  if (n === 0) return null;
  const z = 1.96;
  const p = successes / n;
  const centre = (p + (z * z) / (2 * n)) / (1 + (z * z) / n);
  const half = (z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n))) / (1 + (z * z) / n);
  return [Math.max(0, centre - half), Math.min(1, centre + half)];
}

/** x of a difference (−1…+1) on the effect axis. */
function effectX(value: number): number {
  return EFFECT_X + ((Math.max(-1, Math.min(1, value)) + 1) / 2) * EFFECT_W;
}

function row(label: string, comparison: Comparison, index: number): SVGElement {
  const y = 24 + index * ROW;
  const bar = (kind: "treatment" | "holdout", offset: number) => {
    const side = comparison[kind];
    const width = side.rate === null ? 0 : Math.max(1, side.rate * RATE_W);
    const spread = wilsonInterval(side.successes, side.n);
    const range = spread ? `, 95% ${percent(spread[0])}–${percent(spread[1])}` : "";
    return [
      el(
        "rect",
        { class: `bar ${kind}`, x: RATE_X, y: y + offset, width, height: 14, rx: 2 },
        el("title", {}, `${t(kind)}: ${percent(side.rate)} (${side.successes}/${side.n}${range})`),
      ),
      spread
        ? el("line", {
            class: "whisker",
            x1: RATE_X + spread[0] * RATE_W,
            x2: RATE_X + spread[1] * RATE_W,
            y1: y + offset + 7,
            y2: y + offset + 7,
          })
        : null,
      el("text", { x: RATE_X + RATE_W + 6, y: y + offset + 11, class: "value" }, `${percent(side.rate)} n=${side.n}`),
    ].filter((node): node is SVGElement => node !== null);
  };
  const effect: SVGElement[] = [el("line", { class: "axis", x1: effectX(0), x2: effectX(0), y1: y, y2: y + 36 })];
  if (comparison.interval && comparison.effect !== null) {
    const [low, high] = comparison.interval;
    effect.push(
      el("line", {
        class: `interval ${comparison.verdict.replaceAll(" ", "-")}`,
        x1: effectX(low),
        x2: effectX(high),
        y1: y + 18,
        y2: y + 18,
      }),
      el(
        "circle",
        { class: "effect", cx: effectX(comparison.effect), cy: y + 18, r: 4 },
        el("title", {}, `${points(comparison.effect)} [${points(low)}, ${points(high)}] ${t("pointsUnit")}`),
      ),
      el(
        "text",
        { x: EFFECT_X, y: y + 48, class: "value" },
        `${points(comparison.effect)} [${points(low)}, ${points(high)}]`,
      ),
    );
  } else {
    effect.push(el("text", { x: EFFECT_X, y: y + 22, class: "insufficient" }, verdictText(comparison.verdict)));
  }
  return el(
    "g",
    { "data-row": label, "data-verdict": comparison.verdict },
    el("text", { x: 0, y: y + 14, class: "label" }, label.length > 18 ? `${label.slice(0, 17)}…` : label),
    el("text", { x: 0, y: y + 32, class: "verdict" }, verdictText(comparison.verdict)),
    ...bar("treatment", 2),
    ...bar("holdout", 20),
    ...effect,
  );
}

export function effectChart(report: EffectReport): SVGElement {
  const rows = [
    { label: t("overall"), comparison: report.overall },
    ...report.byTag.map((tag) => ({ label: tag.tag, comparison: tag })),
  ];
  const height = 24 + rows.length * ROW;
  const summary = rows
    .map(
      (entry) =>
        `${entry.label}: ${t("treatment")} ${percent(entry.comparison.treatment.rate)}, ${t("holdout")} ${percent(entry.comparison.holdout.rate)}, ${verdictText(entry.comparison.verdict)}`,
    )
    .join("; ");
  return el(
    "svg",
    {
      class: "effect-chart",
      viewBox: `0 0 ${WIDTH} ${height}`,
      role: "img",
      "aria-label": summary,
      preserveAspectRatio: "xMinYMin meet",
    },
    el("text", { x: RATE_X, y: 12, class: "head" }, `${t("successRate")} (0–100%)`),
    el("text", { x: EFFECT_X, y: 12, class: "head" }, `${t("effect")} (−100…+100 ${t("pointsUnit")})`),
    ...rows.map((entry, index) => row(entry.label, entry.comparison, index)),
  );
}
