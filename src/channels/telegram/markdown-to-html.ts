/**
 * The model's Markdown as Telegram HTML (the few tags Telegram accepts: b, i, s, code,
 * pre, a, blockquote). Everything else is escaped text, so the worst a strange input can
 * do is look plain; if Telegram still rejects the entities, the sender resends plain text.
 */
const FENCE = /^```([\w+-]*)\s*$/;

export function markdownToTelegramHtml(markdown: string): string {
  const out: string[] = [];
  const lines = markdown.split("\n");
  let code: { language: string; lines: string[] } | undefined;
  let quote: string[] = [];
  const flushQuote = () => {
    if (quote.length > 0) out.push(`<blockquote>${quote.join("\n")}</blockquote>`);
    quote = [];
  };
  for (const line of lines) {
    const fence = FENCE.exec(line.trim());
    if (code) {
      if (fence && fence[1] === "") {
        const attribute = code.language ? ` class="language-${escapeHtml(code.language)}"` : "";
        out.push(`<pre><code${attribute}>${escapeHtml(code.lines.join("\n"))}</code></pre>`);
        code = undefined;
      } else {
        code.lines.push(line);
      }
      continue;
    }
    if (fence) {
      flushQuote();
      code = { language: fence[1] ?? "", lines: [] };
      continue;
    }
    const quoted = /^>\s?(.*)$/.exec(line);
    if (quoted) {
      quote.push(inline(quoted[1] ?? ""));
      continue;
    }
    flushQuote();
    const heading = /^#{1,6}\s+(.*)$/.exec(line);
    if (heading) {
      out.push(`<b>${inline(heading[1] ?? "")}</b>`);
      continue;
    }
    const bullet = /^(\s*)[-*+]\s+(.*)$/.exec(line);
    if (bullet) {
      out.push(`${bullet[1] ?? ""}• ${inline(bullet[2] ?? "")}`);
      continue;
    }
    out.push(inline(line));
  }
  flushQuote();
  // An unclosed fence: show what came as code rather than lose it.
  if (code) out.push(`<pre>${escapeHtml(code.lines.join("\n"))}</pre>`);
  return out.join("\n");
}

/** Inline code first (nothing inside it is formatted), then links, bold, italic, strike. */
function inline(text: string): string {
  const pieces = text.split(/(`[^`\n]+`)/);
  return pieces
    .map((piece, index) => {
      if (index % 2 === 1) return `<code>${escapeHtml(piece.slice(1, -1))}</code>`;
      let html = escapeHtml(piece);
      html = html.replace(
        /\[([^\]\n]+)\]\((https?:\/\/[^\s)]+)\)/g,
        (_match, label: string, url: string) => `<a href="${url.replace(/"/g, "&quot;")}">${label}</a>`,
      );
      html = html.replace(/\*\*(?=\S)([^*\n]*?\S)\*\*/g, "<b>$1</b>").replace(/__(?=\S)([^_\n]*?\S)__/g, "<b>$1</b>");
      html = html
        .replace(/(^|[^*\w])\*(?=\S)([^*\n]*?\S)\*(?!\*)/g, "$1<i>$2</i>")
        .replace(/(^|[^_\w])_(?=\S)([^_\n]*?\S)_(?![_\w])/g, "$1<i>$2</i>");
      html = html.replace(/~~(?=\S)([^~\n]*?\S)~~/g, "<s>$1</s>");
      return html;
    })
    .join("");
}

export function escapeHtml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}
