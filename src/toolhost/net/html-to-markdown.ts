/**
 * An HTML page as Markdown a model can read: the main article when Readability finds one
 * (navigation, sidebars and footers left out), else the whole body; scripts, styles and
 * other non-text elements dropped; links and images made absolute against the page's
 * URL (or its `<base href>`), so the model can fetch them next.
 *
 * The libraries (linkedom, Readability, turndown: a few MB of heap) are imported on the
 * first HTML page, not when the child starts: most agents never fetch one.
 */

/** Elements that never carry readable text. */
const DROPPED_ELEMENTS = "script, style, noscript, template, iframe, object, embed, canvas, svg";
/**
 * Elements whose content is raw text or inert, cut out of the markup before it is parsed:
 * on a modern page they are most of its bytes (bundles, inline JSON, CSS), and every byte
 * parsed costs the child memory. Never elements that may close themselves (`<svg/>`).
 */
const RAW_TEXT_ELEMENTS = ["script", "style", "noscript", "template"];
/**
 * Markup beyond this many characters (after the cut above) is not converted: parsing,
 * Readability and turndown each cost time and memory in proportion (measured on a 2-core
 * machine: about 1.7 s and 40 MB for 512 KiB of dense markup, all on the child's event
 * loop), and the model reads at most the output cap. web.fetch raises it with a large
 * output cap (its maxHtmlChars).
 */
export const HTML_CONVERT_MIN_CHARS = 512 * 1024;
/** Readability scores every element; past this many it gives up and the whole body is converted. */
const READABILITY_MAX_ELEMENTS = 15_000;

/** The little of the DOM this module touches (the child is compiled without the DOM's types). */
type DomElement = {
  textContent: string | null;
  getAttribute(name: string): string | null;
  setAttribute(name: string, value: string): void;
  removeAttribute(name: string): void;
  remove(): void;
};
type DomDocument = {
  body: DomElement | null;
  documentElement: DomElement;
  querySelector(selector: string): DomElement | null;
  querySelectorAll(selector: string): Iterable<DomElement>;
};

type Libraries = {
  parseDocument: (html: string) => DomDocument;
  readArticle: (document: DomDocument) => { title: string; content: DomElement } | undefined;
  isReaderable: (document: DomDocument) => boolean;
  toMarkdown: (root: DomElement) => string;
};

export type PageMarkdown = {
  title: string;
  markdown: string;
  /** Readability found the page's article; false when the whole body was converted. */
  article: boolean;
  /** The markup (scripts and styles already cut out) was longer than maxChars and cut there. */
  cut: boolean;
};

export type HtmlToMarkdown = (
  html: string,
  pageUrl: string,
  options?: { wholeBody?: boolean; maxChars?: number },
) => Promise<PageMarkdown>;

/** A converter whose libraries load on its first call (and once). */
export function createHtmlToMarkdown(): HtmlToMarkdown {
  let libraries: Promise<Libraries> | undefined;
  return async (html, pageUrl, options = {}) => {
    // A failed import is tried again on the next page rather than remembered.
    libraries ??= loadLibraries().catch((error: unknown) => {
      libraries = undefined;
      throw error;
    });
    const { parseDocument, readArticle, isReaderable, toMarkdown } = await libraries;
    const stripped = withoutRawText(html);
    const maxChars = options.maxChars ?? HTML_CONVERT_MIN_CHARS;
    const cut = stripped.length > maxChars;
    const markup = cut ? stripped.slice(0, maxChars) : stripped;
    const { document, title } = cleanedDocument(parseDocument, markup, pageUrl);
    if (!options.wholeBody && isReaderable(document)) {
      const article = readArticle(document);
      if (article)
        return { title: article.title || title, markdown: tidy(toMarkdown(article.content)), article: true, cut };
    }
    // Readability changes the document it reads: the whole body comes from a fresh parse.
    const whole = options.wholeBody ? document : cleanedDocument(parseDocument, markup, pageUrl).document;
    return { title, markdown: tidy(toMarkdown(whole.body ?? whole.documentElement)), article: false, cut };
  };
}

async function loadLibraries(): Promise<Libraries> {
  const [{ parseHTML }, { Readability, isProbablyReaderable }, { default: TurndownService }] = await Promise.all([
    import("linkedom"),
    import("@mozilla/readability"),
    import("turndown"),
  ]);
  const turndown = new TurndownService({
    headingStyle: "atx",
    codeBlockStyle: "fenced",
    bulletListMarker: "-",
    hr: "---",
  });
  turndown.remove(["script", "style", "noscript", "template", "iframe"]);
  return {
    parseDocument: (html) => parseHTML(html).document as unknown as DomDocument,
    readArticle(document) {
      // The serializer hands back the article's element: turndown reads it without a second parse.
      let article;
      try {
        article = new Readability(document as never, {
          serializer: (element: unknown) => element,
          maxElemsToParse: READABILITY_MAX_ELEMENTS,
        }).parse();
      } catch {
        // Too many elements (Readability throws): the whole body is converted instead.
        return undefined;
      }
      const content = article?.content as DomElement | null | undefined;
      if (!article || !content || !article.textContent?.trim()) return undefined;
      return { title: article.title?.trim() ?? "", content };
    },
    isReaderable: (document) => isProbablyReaderable(document as never),
    toMarkdown: (root) => turndown.turndown(root as never),
  };
}

function cleanedDocument(
  parseDocument: Libraries["parseDocument"],
  html: string,
  pageUrl: string,
): { document: DomDocument; title: string } {
  const document = parseDocument(withBody(html));
  const title = document.querySelector("title")?.textContent?.replace(/\s+/g, " ").trim() ?? "";
  // A <title> outside the head (a page without one) would repeat the title in the text.
  for (const element of [...document.querySelectorAll(`${DROPPED_ELEMENTS}, body title`)]) element.remove();
  const base = absolute(document.querySelector("base[href]")?.getAttribute("href") ?? "", pageUrl) ?? pageUrl;
  for (const [selector, attribute] of [
    ["a[href]", "href"],
    ["img[src]", "src"],
  ] as const) {
    for (const element of document.querySelectorAll(selector)) {
      const value = element.getAttribute(attribute) ?? "";
      const resolved = absolute(value, base);
      // javascript: links lead nowhere; data: images can be megabytes of base64.
      if (resolved === undefined || /^(javascript|data|vbscript):/i.test(resolved)) element.removeAttribute(attribute);
      else element.setAttribute(attribute, resolved);
    }
  }
  return { document, title };
}

/**
 * `html` without comments and RAW_TEXT_ELEMENTS, found in one pass from left to right
 * (no regular expression that could backtrack over a hostile page). An element left open
 * takes the rest of the page with it, as it does in a browser.
 */
function withoutRawText(html: string): string {
  const open = new RegExp(`<!--|<(${RAW_TEXT_ELEMENTS.join("|")})(?=[\\s>/])`, "gi");
  const kept: string[] = [];
  let position = 0;
  for (;;) {
    open.lastIndex = position;
    const match = open.exec(html);
    if (!match) break;
    kept.push(html.slice(position, match.index));
    const after = match.index + match[0].length;
    if (match[1] === undefined) {
      const end = html.indexOf("-->", after);
      position = end < 0 ? html.length : end + 3;
    } else {
      const close = new RegExp(`</${match[1]}\\s*>`, "gi");
      close.lastIndex = after;
      const found = close.exec(html);
      position = found ? found.index + found[0].length : html.length;
    }
  }
  kept.push(html.slice(position));
  return kept.join("");
}

/**
 * The page with explicit `<html>` and `<body>` elements. HTML lets a page leave them out
 * (browsers add them); linkedom does not, and without a body element the page's content
 * would not be found at all.
 */
function withBody(html: string): string {
  let page = html;
  if (!/<html[\s>]/i.test(page)) page = `<html>${page.replace(/<!doctype[^>]*>/gi, "")}</html>`;
  if (/<body[\s>]/i.test(page)) return page;
  const headClose = /<\/head\s*>/i.exec(page);
  const htmlOpen = /<html\b[^>]*>/i.exec(page);
  const start = headClose ? headClose.index + headClose[0].length : htmlOpen ? htmlOpen.index + htmlOpen[0].length : 0;
  const rest = page.slice(start).replace(/<\/html\s*>/gi, "");
  return `${page.slice(0, start)}${headClose ? "" : "<head></head>"}<body>${rest}</body></html>`;
}

function absolute(reference: string, base: string): string | undefined {
  try {
    return new URL(reference.trim(), base).href;
  } catch {
    return undefined;
  }
}

/** Runs of blank lines collapsed; trailing spaces per line dropped. */
function tidy(markdown: string): string {
  return markdown
    .replace(/[ \t]+$/gm, "")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}
