/**
 * What web.fetch does with a body, decided from its Content-Type (or, without one, from
 * its first bytes): HTML becomes Markdown, text is returned as it is, anything else is
 * refused with a reason naming the type (a PDF, an image, an archive): the model gets a
 * clear "not text" instead of a screen of mojibake.
 */

export type ContentKind =
  | { kind: "html"; mediaType: string }
  | { kind: "text"; mediaType: string }
  | { kind: "unsupported"; mediaType: string; what: string };

const HTML_TYPES = new Set(["text/html", "application/xhtml+xml"]);
const TEXT_APPLICATION_TYPES = new Set([
  "application/json",
  "application/xml",
  "application/javascript",
  "application/ecmascript",
  "application/x-javascript",
  "application/x-ndjson",
  "application/yaml",
  "application/x-yaml",
  "application/toml",
  "application/csv",
  "application/sql",
  "application/graphql",
  "application/x-sh",
  "application/x-www-form-urlencoded",
]);
const ARCHIVE_TYPES = new Set([
  "application/zip",
  "application/gzip",
  "application/x-gzip",
  "application/x-tar",
  "application/x-7z-compressed",
  "application/x-rar-compressed",
  "application/vnd.rar",
  "application/x-bzip2",
  "application/x-xz",
  "application/zstd",
  "application/java-archive",
]);
/** Bytes of a body without a Content-Type looked at for NUL bytes. */
const SNIFF_BYTES = 1024;

/** The media type of a Content-Type value, lower case, without parameters ("" when absent). */
export function mediaTypeOf(contentType: string | null): string {
  return (contentType ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
}

export function contentKind(contentType: string | null, firstBytes: Buffer): ContentKind {
  const mediaType = mediaTypeOf(contentType);
  if (mediaType === "") return sniffedKind(firstBytes);
  if (HTML_TYPES.has(mediaType)) return { kind: "html", mediaType };
  const [top, sub = ""] = mediaType.split("/");
  // image/svg+xml is XML, but an image to the reader: refused like the others.
  const textual = top === "text" || TEXT_APPLICATION_TYPES.has(mediaType) || /\+(json|xml)$/.test(sub);
  if (textual && top !== "image") return { kind: "text", mediaType };
  return { kind: "unsupported", mediaType, what: describeBinary(mediaType, top ?? "") };
}

function sniffedKind(bytes: Buffer): ContentKind {
  const start = bytes.subarray(0, SNIFF_BYTES);
  if (start.subarray(0, 5).toString("latin1") === "%PDF-")
    return {
      kind: "unsupported",
      mediaType: "application/pdf",
      what: "a PDF (no Content-Type; recognised by its first bytes)",
    };
  if (start.includes(0))
    return { kind: "unsupported", mediaType: "unknown", what: "binary data (no Content-Type; it holds NUL bytes)" };
  const head = start
    .toString("latin1")
    .replace(/^\uFEFF|^\xEF\xBB\xBF/, "")
    .trimStart()
    .slice(0, 64)
    .toLowerCase();
  if (head.startsWith("<!doctype html") || head.startsWith("<html") || head.startsWith("<head"))
    return { kind: "html", mediaType: "text/html" };
  return { kind: "text", mediaType: "text/plain" };
}

function describeBinary(mediaType: string, top: string): string {
  if (mediaType === "application/pdf") return "a PDF";
  if (top === "image") return "an image";
  if (top === "audio") return "audio";
  if (top === "video") return "a video";
  if (top === "font") return "a font";
  if (ARCHIVE_TYPES.has(mediaType)) return "an archive";
  if (mediaType === "application/octet-stream") return "binary data";
  if (mediaType.includes("msword") || mediaType.includes("officedocument") || mediaType.includes("ms-excel"))
    return "an office document";
  return "not a text type";
}
