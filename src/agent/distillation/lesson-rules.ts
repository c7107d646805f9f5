/**
 * What a lesson's text may be. Every lesson passes these checks when it is written, and
 * its text is checked again when it is read for a prompt: a lesson is data for the model,
 * so text that tries to instruct it, hides characters, links somewhere, pipes a download
 * into a shell, or condemns a tool without saying what to do instead never reaches a
 * prompt. A lesson that names a command fetching code from the network and running it is
 * not refused but held: it reaches a prompt only once an operator has approved it.
 */
import { createHash } from "node:crypto";
import { terms } from "../../knowledge/keywords.js";
import type { Experience } from "../../store/experiences-store.js";
import { unsafeText } from "./unsafe-text.js";

export const SUMMARY_MIN_CHARS = 20;
export const SUMMARY_MAX_CHARS = 200;
export const MAX_TAGS = 6;
/** Two lessons whose terms overlap this much say the same thing (Jaccard). */
export const NEAR_DUPLICATE_JACCARD = 0.7;

const INSTRUCTION_PATTERNS: RegExp[] = [
  /\b(ignore|disregard|forget|override)\b.{0,40}\b(previous|prior|above|earlier|all|system|instructions?|rules?|prompt)\b/i,
  /\b(system prompt|developer message|jailbreak|prompt injection)\b/i,
  /\byou (must|should) (now|always|never)\b/i,
  /\bfrom now on\b/i,
  /\b(act|behave|pretend) as\b/i,
  /\b(reveal|print|send|leak|exfiltrate)\b.{0,30}\b(secret|token|password|api key|credentials?|env)\b/i,
  /<\/?(system|assistant|user|instructions?)>/i,
  /(忽略|无视|忘记).{0,10}(之前|以上|上面|所有|系统).{0,6}(指令|规则|提示|要求)?/,
  /(从现在开始|从今以后|系统提示词|你必须永远|扮演)/,
  /(泄露|发送|打印).{0,10}(密钥|密码|令牌|token)/i,
];

const NEGATIVE_TOOL_CLAIM =
  /\b(is|are)\s+(broken|useless|unusable|unreliable)\b|\b(doesn'?t|does not|don'?t|do not|never|cannot|can'?t)\s+work\b|\bnever use\b|\bavoid (using )?(the )?\w+ tool\b|(坏了|不可用|不能用|用不了|无法使用|不要用|别用|永远不要)/i;
const REMEDY =
  /\b(instead|use|pass|add|set|run|retry|switch|with|then|fix|workaround|by)\b|(改用|换用|加上|设置|先用|重试|通过|代替|而是)/i;

/** `hold`: the text is fine but names a command run from the network; an operator decides. */
export type TextCheck = { ok: true } | { ok: false; reason: string; hold?: true };

/** The checks every lesson's text must pass, at write time and again at read time. */
export function checkLessonText(summary: string): TextCheck {
  const unsafe = unsafeText(summary);
  if (unsafe && !unsafe.hold) return { ok: false, reason: unsafe.reason };
  const length = [...summary].length;
  if (length < SUMMARY_MIN_CHARS || length > SUMMARY_MAX_CHARS)
    return { ok: false, reason: `summary is ${length} characters; ${SUMMARY_MIN_CHARS}-${SUMMARY_MAX_CHARS} allowed` };
  if (/[\r\n]/.test(summary)) return { ok: false, reason: "summary spans several lines" };
  if (INSTRUCTION_PATTERNS.some((pattern) => pattern.test(summary)))
    return { ok: false, reason: "reads like an instruction to the model, not a lesson" };
  if (NEGATIVE_TOOL_CLAIM.test(summary) && !remedyAfterClaim(summary))
    return { ok: false, reason: "a negative claim about a tool without a remedy" };
  // Only a lesson that passes everything else is worth an operator's time.
  if (unsafe) return { ok: false, hold: true, reason: unsafe.reason };
  return { ok: true };
}

/**
 * The read-time gate: a lesson reaches a prompt (or a skill, or a rule candidate) only if
 * today's checks pass, or they only hold it and an operator approved it. Lessons stored
 * before the checks grew are judged by the same function, so a stored payload never
 * reaches a prompt whatever wrote it.
 */
export function lessonMayBeShown(lesson: Pick<Experience, "summary" | "approvedBy">): boolean {
  const check = checkLessonText(lesson.summary);
  return check.ok || (check.hold === true && lesson.approvedBy !== null);
}

/**
 * The text says a tool or command does not work ("X is broken", "Y doesn't work", "别用 Z").
 * Such a lesson has a remedy (else the checks refuse it), but the claim ages: tools get
 * fixed, so the lifecycle revalidates it after a while.
 */
export function isNegativeClaim(summary: string): boolean {
  return NEGATIVE_TOOL_CLAIM.test(summary) || UNAVAILABLE_CLAIM.test(summary);
}

/** Also ages (but is not refused without a remedy): a tool or command said to be missing. */
const UNAVAILABLE_CLAIM =
  /\b(is|are)\s+(not\s+(available|installed|supported)|unavailable|missing)\b|(没有安装|未安装|不支持|不存在)/i;

function remedyAfterClaim(summary: string): boolean {
  // "X is broken" alone condemns a tool; "X is broken for Y, use Z instead" teaches something.
  const claim = NEGATIVE_TOOL_CLAIM.exec(summary);
  if (!claim) return true;
  const rest = summary.slice(0, claim.index) + summary.slice(claim.index + claim[0].length);
  return REMEDY.test(rest);
}

/** Tags: lowercase words or CJK runs joined by hyphens, 2-32 characters, unique, sorted. */
export function normalizeTags(raw: readonly string[]): string[] {
  const tags = new Set<string>();
  for (const item of raw) {
    const tag = item
      .normalize("NFKC")
      .toLowerCase()
      .replace(/[^\p{L}\p{N}]+/gu, "-")
      .replace(/^-+|-+$/g, "")
      .slice(0, 32)
      .replace(/-+$/, "");
    if ([...tag].length >= 2) tags.add(tag);
  }
  return [...tags].sort();
}

/** The same lesson written with other spacing, case or punctuation has the same hash. */
export function contentHash(summary: string): string {
  const canonical = summary
    .normalize("NFKC")
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim();
  return createHash("sha256").update(canonical).digest("hex").slice(0, 32);
}

export function jaccard(left: ReadonlySet<string>, right: ReadonlySet<string>): number {
  if (left.size === 0 && right.size === 0) return 0;
  let shared = 0;
  for (const item of left) if (right.has(item)) shared += 1;
  return shared / (left.size + right.size - shared);
}

/**
 * Same words and the same concrete details. Two lessons that differ only in a flag, a
 * number or a path say different things ("--force-tls" vs "--plain-tls"): never merged.
 */
export function isNearDuplicate(summary: string, other: string): boolean {
  return jaccard(terms(summary), terms(other)) >= NEAR_DUPLICATE_JACCARD && sameDetails(summary, other);
}

/** Same words, different concrete details: the two lessons give conflicting advice. */
export function isConflicting(summary: string, other: string): boolean {
  return jaccard(terms(summary), terms(other)) >= NEAR_DUPLICATE_JACCARD && !sameDetails(summary, other);
}

/** The flags, numbers, paths and code spans a text names: what two lessons must share to say the same thing. */
export function concreteDetails(text: string): Set<string> {
  return new Set(text.match(CONCRETE_DETAIL) ?? []);
}

function sameDetails(summary: string, other: string): boolean {
  const left = concreteDetails(summary);
  const right = concreteDetails(other);
  return left.size === right.size && [...left].every((detail) => right.has(detail));
}

const CONCRETE_DETAIL = /`[^`]+`|--?[A-Za-z][\w.:/=-]*|[\w.-]*\d[\w.:/-]*|(?:\.{0,2}\/)[\w./-]+/g;
