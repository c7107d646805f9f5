/**
 * web.fetch: GET one URL and return it as text a model can read. It goes through the
 * fetch it is given, which for an agent with an allow list is the egress proxy's
 * (net/proxied-fetch.ts): the proxy checks every host, this tool checks every URL's
 * scheme, including each redirect's, which it follows itself (at most MAX_REDIRECTS).
 *
 * Bounded three ways: the body is read up to `max_bytes` while it streams and cut there
 * (the rest never downloaded), the whole fetch has a deadline, and the output is capped
 * like every tool's (define-tool.ts). An HTTP error status is an answer, not a failure:
 * the model reads the status and the start of the body. Failures are ToolErrors the
 * model can act on: NETWORK_REFUSED with the proxy's reason, NETWORK_FAILED, TIMEOUT,
 * UNSUPPORTED_CONTENT naming the type.
 */
import { z } from "zod";
import { readLimitedBody } from "../net/body-reader.js";
import { type ContentKind, contentKind, mediaTypeOf } from "../net/content-kind.js";
import { EgressFailedError, EgressRefusedError } from "../net/egress-errors.js";
import { createHtmlToMarkdown, HTML_CONVERT_MIN_CHARS, type HtmlToMarkdown } from "../net/html-to-markdown.js";
import { REDIRECT_STATUSES, type FetchLike } from "../net/proxied-fetch.js";
import { decodeText, declaredCharset } from "../net/text-decoding.js";
import { ToolError } from "../tool-error.js";
import { defineTool } from "./define-tool.js";

export const WEB_FETCH_DEFAULT_MAX_BYTES = 2 * 1024 * 1024;
/** The most a model may ask for: the body is held in memory whole while it is converted. */
export const WEB_FETCH_MAX_BYTES = 10 * 1024 * 1024;
export const WEB_FETCH_MAX_REDIRECTS = 5;
const MAX_URL_LENGTH = 4096;
/** An error page is read this far; the model needs its gist, not all of it. */
const ERROR_BODY_BYTES = 16 * 1024;
const ERROR_EXCERPT_CHARS = 1_000;
const ACCEPT = "text/html,application/xhtml+xml,text/markdown;q=0.9,text/plain;q=0.9,application/json;q=0.8,*/*;q=0.5";
const USER_AGENT = "Mozilla/5.0 (compatible; LaodingBot web.fetch)";

export function createWebFetchTool(options: { fetch: FetchLike }) {
  const toMarkdown = createHtmlToMarkdown();
  return defineTool({
    name: "web.fetch",
    description: `Fetch a web page or text resource (GET, http/https) and return it as readable text: HTML as Markdown (the main article when the page has one), plain text, Markdown, JSON, XML and CSV as they are. Follows up to ${WEB_FETCH_MAX_REDIRECTS} redirects. Only hosts on the agent's network allow list can be reached. PDFs, images, archives and other binary content are refused. The body is cut at max_bytes; output is capped.`,
    hints: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
    deadline: {
      argument: "timeout_ms",
      defaultMs: (limits) => limits.shellTimeoutMs,
      maxMs: (limits) => limits.shellMaxTimeoutMs,
    },
    inputSchema: z
      .object({
        url: z.string().min(1).max(MAX_URL_LENGTH).describe("Absolute http:// or https:// URL"),
        max_bytes: z
          .number()
          .int()
          .min(1)
          .max(WEB_FETCH_MAX_BYTES)
          .optional()
          .describe(`Most body bytes to read (default ${WEB_FETCH_DEFAULT_MAX_BYTES}); a longer body is cut`),
        timeout_ms: z
          .number()
          .int()
          .min(100)
          .optional()
          .describe("Timeout in milliseconds for the whole fetch; capped by the configured maximum"),
      })
      .strict(),
    async execute(args, context) {
      const start = parseTarget(args.url);
      const timeoutMs = Math.min(args.timeout_ms ?? context.limits.shellTimeoutMs, context.limits.shellMaxTimeoutMs);
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(), timeoutMs);
      const onCancel = () => controller.abort();
      context.signal.addEventListener("abort", onCancel, { once: true });
      if (context.signal.aborted) controller.abort();
      try {
        const { response, url } = await fetchFollowing(options.fetch, start, controller.signal);
        return await render(response, url, {
          maxBytes: args.max_bytes ?? WEB_FETCH_DEFAULT_MAX_BYTES,
          // Markup converted: a few times what the model may be shown, never less than the converter's floor.
          maxHtmlChars: Math.max(HTML_CONVERT_MIN_CHARS, 4 * context.limits.outputMaxBytes),
          toMarkdown,
        });
      } catch (error) {
        if (error instanceof ToolError) throw error;
        if (context.signal.aborted) throw new ToolError("TIMEOUT", "the call was cancelled before the page arrived");
        if (controller.signal.aborted)
          throw new ToolError("TIMEOUT", `${start.href} did not answer completely within ${timeoutMs} ms`);
        throw networkError(error, start);
      } finally {
        clearTimeout(timer);
        context.signal.removeEventListener("abort", onCancel);
        // A body left unread (a refused PDF, a cut page) would hold its connection, and one of the
        // agent's proxy connections, until the proxy's idle timeout: ending the request frees both.
        controller.abort();
      }
    },
  });
}

function parseTarget(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ToolError("INVALID_ARGS", `url must be an absolute http:// or https:// URL; got ${JSON.stringify(text)}`);
  }
  checkScheme(url, "INVALID_ARGS", "url");
  if (url.username !== "" || url.password !== "")
    throw new ToolError("INVALID_ARGS", "url must not carry a user name or password; web.fetch sends no credentials");
  url.hash = "";
  return url;
}

function checkScheme(url: URL, code: "INVALID_ARGS" | "NETWORK_FAILED", what: string): void {
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new ToolError(
      code,
      `${what} ${url.href} is ${url.protocol.slice(0, -1)}; web.fetch fetches http and https only`,
    );
}

/** GETs `start`, following redirects itself so each new URL is checked (the proxy checks each host). */
async function fetchFollowing(
  fetch: FetchLike,
  start: URL,
  signal: AbortSignal,
): Promise<{ response: Response; url: URL }> {
  let url = start;
  for (let redirects = 0; ; redirects += 1) {
    const response = await fetch(url.href, {
      method: "GET",
      redirect: "manual",
      signal,
      headers: { accept: ACCEPT, "user-agent": USER_AGENT },
    });
    const location = response.headers.get("location");
    if (!REDIRECT_STATUSES.has(response.status) || location === null) return { response, url };
    response.body?.cancel().catch(() => {});
    let next: URL;
    try {
      next = new URL(location, url);
    } catch {
      throw new ToolError(
        "NETWORK_FAILED",
        `${url.href} redirected to an invalid location ${JSON.stringify(location)}`,
      );
    }
    next.hash = "";
    // web.fetch sends no credentials, and a redirect's would be shown to the model in every answer that names the URL.
    next.username = "";
    next.password = "";
    checkScheme(next, "NETWORK_FAILED", `${url.href} redirected to`);
    if (redirects >= WEB_FETCH_MAX_REDIRECTS)
      throw new ToolError(
        "NETWORK_FAILED",
        `${start.href} redirected more than ${WEB_FETCH_MAX_REDIRECTS} times; the next redirect pointed to ${next.href} (fetch it directly if it is still wanted)`,
      );
    url = next;
  }
}

async function render(
  response: Response,
  url: URL,
  options: { maxBytes: number; maxHtmlChars: number; toMarkdown: HtmlToMarkdown },
) {
  const { maxBytes, toMarkdown } = options;
  const contentType = response.headers.get("content-type");
  if (response.status >= 400) return { output: await errorAnswer(response, url, toMarkdown), truncated: false };
  // A declared binary type is refused before a byte of it is read.
  if (contentType !== null) refuseUnsupported(contentKind(contentType, Buffer.alloc(0)), url);
  const { bytes, cut } = await readLimitedBody(response, maxBytes);
  const kind = contentKind(contentType, bytes);
  refuseUnsupported(kind, url);
  const decoded = await decodeText(bytes, declaredCharset(bytes, contentType, kind.kind));
  const text = cut ? decoded.text.replace(/\uFFFD+$/, "") : decoded.text;
  const lines: string[] = [];
  let body: string;
  let markupCut = false;
  if (kind.kind === "html") {
    const page = await toMarkdown(text, url.href, { maxChars: options.maxHtmlChars }).catch(
      (error: unknown) => error as Error,
    );
    if (page instanceof Error) {
      // A page the converter chokes on is still worth reading as it is.
      lines.push(
        `URL: ${url.href}`,
        `Content-Type: ${kind.mediaType}`,
        `Note: not converted to Markdown (${page.message})`,
      );
      body = text;
    } else {
      if (page.title) lines.push(`# ${page.title}`);
      lines.push(`URL: ${url.href}`);
      body = page.markdown;
      markupCut = page.cut;
      if (page.cut)
        lines.push(
          `Note: only the first ${options.maxHtmlChars} characters of the page's markup (scripts and styles left out) were converted`,
        );
    }
  } else {
    lines.push(`URL: ${url.href}`, `Content-Type: ${kind.mediaType}`);
    body = text;
  }
  if (response.status !== 200) lines.push(`Status: ${response.status} ${response.statusText}`.trimEnd());
  if (decoded.note) lines.push(`Note: ${decoded.note}`);
  const length = response.headers.get("content-length");
  const cutNote = cut
    ? `\n\n…[body cut at ${maxBytes} bytes${length ? ` of ${length}` : ""}; ${maxBytes < WEB_FETCH_MAX_BYTES ? `max_bytes up to ${WEB_FETCH_MAX_BYTES} reads more` : "this is the most web.fetch reads"}]`
    : "";
  return { output: `${lines.join("\n")}\n\n${body}${cutNote}`, truncated: cut || markupCut };
}

function refuseUnsupported(kind: ContentKind, url: URL): asserts kind is Exclude<ContentKind, { kind: "unsupported" }> {
  if (kind.kind !== "unsupported") return;
  throw new ToolError(
    "UNSUPPORTED_CONTENT",
    `${url.href} is ${kind.mediaType === "unknown" ? "" : `${kind.mediaType}, `}${kind.what}; web.fetch returns text only: HTML pages, plain text, Markdown, JSON, XML, CSV`,
  );
}

/** An HTTP error as the model reads it: the status, then the start of the body as text. */
async function errorAnswer(response: Response, url: URL, toMarkdown: HtmlToMarkdown): Promise<string> {
  const contentType = response.headers.get("content-type");
  const status = `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ""} from ${url.href}`;
  const { bytes, cut } = await readLimitedBody(response, ERROR_BODY_BYTES);
  const kind = contentKind(contentType, bytes);
  if (bytes.length === 0) return `${status}\n\n(empty body)`;
  if (kind.kind === "unsupported") return `${status}\n\n(a body of type ${kind.mediaType}, not shown)`;
  const { text } = await decodeText(bytes, declaredCharset(bytes, contentType, kind.kind));
  // An error page the converter chokes on is shown as it came.
  const readable =
    kind.kind === "html"
      ? await toMarkdown(text, url.href, { wholeBody: true }).then(
          (page) => page.markdown,
          () => text.trim(),
        )
      : text.trim();
  const excerpt =
    readable.length > ERROR_EXCERPT_CHARS || cut ? `${readable.slice(0, ERROR_EXCERPT_CHARS)}…` : readable;
  return `${status}\nContent-Type: ${mediaTypeOf(contentType) || "(none)"}\n\n${excerpt}`;
}

function networkError(error: unknown, url: URL): ToolError {
  if (error instanceof EgressRefusedError) return new ToolError("NETWORK_REFUSED", error.reason);
  if (error instanceof EgressFailedError) return new ToolError("NETWORK_FAILED", error.reason);
  const message = error instanceof Error ? error.message : String(error);
  return new ToolError("NETWORK_FAILED", `${url.host} could not be fetched: ${message}`);
}
