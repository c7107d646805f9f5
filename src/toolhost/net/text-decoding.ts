/**
 * A body's bytes as text, in the charset the page says it uses. Where the charset comes
 * from, strongest first (as browsers do): a byte-order mark, the Content-Type header's
 * `charset`, then for HTML a `<meta charset>` or `<meta http-equiv="Content-Type">` and
 * for XML the `<?xml encoding?>` declaration, looked for in the first SNIFF_BYTES; else
 * UTF-8. TextDecoder handles the WHATWG encodings; iconv-lite (loaded only when needed)
 * the ones a Node built with small ICU lacks (GBK, GB18030, Big5, Shift_JIS) and a few
 * more; a charset neither knows is decoded as UTF-8 and the result says so.
 */

/** How far into the body a charset declaration is looked for (the HTML standard prescans 1024; pages are sloppier). */
const SNIFF_BYTES = 4 * 1024;

export type DecodedText = { text: string; charset: string; note?: string };

/** The charset the body declares, by the order above; undefined when nothing says. */
export function declaredCharset(bytes: Buffer, contentType: string | null, kind: "html" | "text"): string | undefined {
  const bom = bomCharset(bytes);
  if (bom) return bom;
  const fromHeader = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(contentType ?? "")?.[1];
  if (fromHeader) return fromHeader.toLowerCase();
  const head = bytes.subarray(0, SNIFF_BYTES).toString("latin1");
  const fromXml = /^\s*<\?xml[^>]*?\bencoding\s*=\s*["']([A-Za-z0-9._:-]+)["']/.exec(head)?.[1];
  if (fromXml) return fromXml.toLowerCase();
  if (kind !== "html") return undefined;
  // Covers `<meta charset="gbk">` and `<meta http-equiv="Content-Type" content="text/html; charset=gbk">`.
  const fromMeta = /<meta\b[^>]*?\bcharset\s*=\s*["']?\s*([A-Za-z0-9._:-]+)/i.exec(head)?.[1];
  return fromMeta?.toLowerCase();
}

export async function decodeText(bytes: Buffer, charset: string | undefined): Promise<DecodedText> {
  const label = charset ?? "utf-8";
  try {
    return { text: new TextDecoder(label).decode(bytes), charset: label };
  } catch {
    // Not a label this Node's TextDecoder knows: iconv-lite may.
  }
  const { default: iconv } = await import("iconv-lite");
  if (iconv.encodingExists(label)) return { text: iconv.decode(bytes, label), charset: label };
  return {
    text: new TextDecoder("utf-8").decode(bytes),
    charset: "utf-8",
    note: `the page declares the charset "${label}", which is not known here; decoded as UTF-8`,
  };
}

function bomCharset(bytes: Buffer): string | undefined {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return "utf-8";
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return "utf-16be";
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return "utf-16le";
  return undefined;
}
