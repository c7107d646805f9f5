/**
 * A library document split into the frontmatter fields the form edits and the body. Lines
 * the form does not know (other keys, comments) are kept as they were, so saving through
 * the form never drops what someone wrote by hand.
 */
export const FORM_FIELDS = ["title", "keywords", "summary", "applicable", "last_verified"] as const;
export type FormField = (typeof FORM_FIELDS)[number];
export type EditableDoc = { fields: Record<FormField, string>; otherLines: string[]; body: string };

export function emptyDoc(): EditableDoc {
  return {
    fields: { title: "", keywords: "", summary: "", applicable: "", last_verified: "" },
    otherLines: [],
    body: "",
  };
}

export function splitDoc(text: string): EditableDoc {
  const doc = emptyDoc();
  const normalized = text.replace(/^\uFEFF/, "").replace(/\r\n/g, "\n");
  const end = normalized.startsWith("---\n") ? normalized.indexOf("\n---", 3) : -1;
  if (end < 0) return { ...doc, body: normalized };
  for (const line of normalized.slice(4, end).split("\n")) {
    const match = /^([A-Za-z_][\w-]*):\s*(.*)$/.exec(line);
    const key = match?.[1] as FormField | undefined;
    if (match && key && (FORM_FIELDS as readonly string[]).includes(key)) doc.fields[key] = unquote(match[2] ?? "");
    else if (line.trim() !== "") doc.otherLines.push(line);
  }
  doc.body = normalized.slice(end + 4).replace(/^[^\n]*\n?/, "");
  return doc;
}

export function joinDoc(doc: EditableDoc): string {
  const lines = FORM_FIELDS.filter((key) => doc.fields[key].trim() !== "").map(
    (key) => `${key}: ${quote(doc.fields[key].replace(/\s+/g, " ").trim())}`,
  );
  const head = [...lines, ...doc.otherLines];
  const body = doc.body.endsWith("\n") || doc.body === "" ? doc.body : `${doc.body}\n`;
  return head.length === 0 ? body : `---\n${head.join("\n")}\n---\n${body}`;
}

function unquote(value: string): string {
  const trimmed = value.trim();
  if (trimmed.length >= 2 && trimmed.startsWith('"') && trimmed.endsWith('"')) {
    try {
      return String(JSON.parse(trimmed));
    } catch {
      return trimmed.slice(1, -1);
    }
  }
  if (trimmed.length >= 2 && trimmed.startsWith("'") && trimmed.endsWith("'"))
    return trimmed.slice(1, -1).replaceAll("''", "'");
  return trimmed;
}

/** Quoted only when YAML would otherwise read it as something else. */
function quote(value: string): string {
  return /^[\s"'#&*!|>%@`[\]{},-]|: | #|^(true|false|null|yes|no|~)$/i.test(value) ? JSON.stringify(value) : value;
}
