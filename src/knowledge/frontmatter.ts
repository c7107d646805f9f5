/**
 * A lenient frontmatter reader for SKILL.md and experience docs (no YAML library):
 * `key: value` lines between `---` fences, quoted strings, `[a, b]` inline lists and
 * `- item` block lists, `>`/`|` folded blocks. Unknown shapes are kept as text; only a
 * missing closing fence is an error.
 */
export type FrontmatterValue = string | string[];
export type Frontmatter = { data: Record<string, FrontmatterValue>; body: string };
export type ParseResult<T> = { ok: true; value: T } | { ok: false; error: string };

export function parseFrontmatter(text: string): ParseResult<Frontmatter> {
  const normalized = text.replace(/^\uFEFF/, "").replace(/\r\n/g, "\n");
  if (!normalized.startsWith("---\n")) return { ok: true, value: { data: {}, body: normalized } };
  const end = normalized.indexOf("\n---", 4);
  if (end < 0) return { ok: false, error: "frontmatter starts with --- but has no closing ---" };
  const lines = normalized.slice(4, end).split("\n");
  const afterFence = normalized.indexOf("\n", end + 4);
  const body = afterFence < 0 ? "" : normalized.slice(afterFence + 1);
  const data: Record<string, FrontmatterValue> = {};
  for (let index = 0; index < lines.length; index += 1) {
    const line = lines[index] as string;
    if (line.trim() === "" || line.trimStart().startsWith("#")) continue;
    const match = /^([A-Za-z_][\w-]*)\s*:\s*(.*)$/.exec(line);
    if (!match) continue;
    const key = match[1] as string;
    const raw = (match[2] as string).trim();
    if (raw === "" || raw === "|" || raw === ">" || raw === ">-" || raw === "|-") {
      const block: string[] = [];
      while (
        index + 1 < lines.length &&
        /^(\s+|$)/.test(lines[index + 1] as string) &&
        !/^[A-Za-z_][\w-]*\s*:/.test(lines[index + 1] as string)
      ) {
        block.push((lines[index + 1] as string).trim());
        index += 1;
      }
      const items = block.filter((item) => item.startsWith("- "));
      if (raw === "" && items.length > 0 && items.length === block.filter(Boolean).length)
        data[key] = items.map((item) => unquote(item.slice(2).trim()));
      else data[key] = block.filter(Boolean).join(raw.startsWith("|") ? "\n" : " ");
      continue;
    }
    if (raw.startsWith("[") && raw.endsWith("]")) {
      data[key] = splitList(raw.slice(1, -1));
      continue;
    }
    data[key] = unquote(raw);
  }
  return { ok: true, value: { data, body } };
}

export function textValue(value: FrontmatterValue | undefined): string | undefined {
  if (value === undefined) return undefined;
  return Array.isArray(value) ? value.join(", ") : value;
}

function unquote(value: string): string {
  if (
    value.length >= 2 &&
    ((value.startsWith('"') && value.endsWith('"')) || (value.startsWith("'") && value.endsWith("'")))
  ) {
    const inner = value.slice(1, -1);
    return value.startsWith('"') ? inner.replace(/\\"/g, '"').replace(/\\n/g, "\n") : inner.replace(/''/g, "'");
  }
  return value;
}

function splitList(inner: string): string[] {
  return inner
    .split(/[,，]/)
    .map((item) => unquote(item.trim()))
    .filter((item) => item.length > 0);
}
