/**
 * Keyword extraction for Chinese and English text: `Intl.Segmenter` splits words
 * (Chinese has no spaces), stop words are dropped, and CJK runs also yield character
 * bigrams so matching survives segmentation differences. Used by routing's lexical
 * shortlist, gap intent keys and skill-overlap checks.
 */
/** Made on first use: ICU's segmenter and its Chinese dictionary cost a toolhost child about 4 MiB, and most never segment. */
let segmenter: Intl.Segmenter | undefined;
const CJK = /[\u3400-\u9fff\uf900-\ufaff]/;

const STOP_WORDS = new Set([
  "a",
  "an",
  "the",
  "and",
  "or",
  "to",
  "of",
  "in",
  "on",
  "for",
  "with",
  "is",
  "are",
  "be",
  "it",
  "this",
  "that",
  "my",
  "me",
  "i",
  "you",
  "your",
  "we",
  "our",
  "can",
  "could",
  "please",
  "how",
  "what",
  "do",
  "does",
  "help",
  "want",
  "need",
  "would",
  "like",
  "some",
  "from",
  "at",
  "by",
  "as",
  "into",
  "about",
  "use",
  "when",
  "will",
  "should",
  "its",
  "not",
  "no",
  "yes",
  "so",
  "if",
  "then",
  "的",
  "了",
  "是",
  "我",
  "你",
  "他",
  "她",
  "它",
  "们",
  "在",
  "和",
  "与",
  "就",
  "都",
  "而",
  "及",
  "也",
  "把",
  "被",
  "让",
  "给",
  "吗",
  "呢",
  "吧",
  "啊",
  "请",
  "帮",
  "帮我",
  "一下",
  "怎么",
  "如何",
  "什么",
  "这个",
  "那个",
  "一个",
  "可以",
  "能",
  "要",
  "想",
  "用",
  "使用",
  "需要",
  "下",
  "上",
  "中",
  "有",
  "没有",
  "不",
  "很",
  "还",
  "又",
  "再",
  "去",
  "来",
  "做",
]);

/** Words of a text, lowercased, without stop words or punctuation, in order of appearance. */
export function words(text: string): string[] {
  const result: string[] = [];
  segmenter ??= new Intl.Segmenter("zh", { granularity: "word" });
  for (const segment of segmenter.segment(text.toLowerCase())) {
    if (!segment.isWordLike) continue;
    for (const part of segment.segment.split(/[-_./]+/)) {
      const word = part.trim();
      if (word.length === 0 || STOP_WORDS.has(word)) continue;
      if (!CJK.test(word) && word.length < 2 && !/\d/.test(word)) continue;
      result.push(word);
    }
  }
  return result;
}

/** Matching terms: words plus CJK character bigrams. */
export function terms(text: string): Set<string> {
  const result = new Set<string>();
  for (const word of words(text)) {
    result.add(word);
    if (CJK.test(word) && word.length > 2) {
      for (let index = 0; index + 1 < word.length; index += 1) result.add(word.slice(index, index + 2));
    }
  }
  return result;
}

/** Share of `query` terms found in `document` terms (0..1). */
export function overlap(query: Set<string>, document: Set<string>): number {
  if (query.size === 0) return 0;
  let hits = 0;
  for (const term of query) if (document.has(term)) hits += 1;
  return hits / query.size;
}

/** A slug of the most telling words: lowercase, hyphens, bounded length. */
export function slugFromWords(items: string[], maxWords = 4, maxLength = 48): string {
  const slug = [...new Set(items)]
    .slice(0, maxWords)
    .join("-")
    .normalize("NFKC")
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, maxLength)
    .replace(/-+$/, "");
  return slug;
}
