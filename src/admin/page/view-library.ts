/** One agent's library: search, open, delete, rebuild the index, and the way to the editor. */
import type { DocList, DocSummary } from "./api.js";
import { load, runAction, type ViewContext } from "./context.js";
import { formatBytes, h, replaceChildren } from "./dom.js";
import { t } from "./i18n.js";

export function libraryView(context: ViewContext, agentId: string): Promise<void> {
  return load(
    context,
    () => context.api.docs(agentId),
    (list) => renderLibrary(context, agentId, list),
  );
}

/** Lowercased, width-folded (NFKC): "ＳＳＨ" finds "ssh"; Chinese matches as substrings. */
function fold(text: string): string {
  return text.normalize("NFKC").toLocaleLowerCase();
}

export function matches(doc: DocSummary, query: string): boolean {
  const haystack = fold([doc.fileName, doc.title, doc.keywords.join(" "), doc.summary, doc.applicable].join("\n"));
  return fold(query)
    .split(/\s+/)
    .filter(Boolean)
    .every((term) => haystack.includes(term));
}

function renderLibrary(context: ViewContext, agentId: string, list: DocList): void {
  const encoded = encodeURIComponent(agentId);
  const search = h("input", {
    type: "search",
    id: "doc-search",
    placeholder: t("searchPlaceholder"),
    autocomplete: "off",
  });
  const count = h("p", { class: "hint", "aria-live": "polite" });
  const results = h("div", {});
  const indexText = h("pre", { class: "index" }, list.indexContent);
  const draw = () => {
    const query = search.value.trim();
    const shown = list.docs.filter((doc) => matches(doc, query));
    count.textContent = t("shown", { shown: shown.length, total: list.docs.length });
    if (list.docs.length === 0) return replaceChildren(results, h("p", {}, t("noDocs")));
    if (shown.length === 0) return replaceChildren(results, h("p", {}, t("noMatches", { query })));
    replaceChildren(
      results,
      h(
        "table",
        { class: "cards docs" },
        h(
          "thead",
          {},
          h(
            "tr",
            {},
            [t("title"), t("keywords"), t("summary"), t("lastVerified"), t("size"), ""].map((label) =>
              h("th", {}, label),
            ),
          ),
        ),
        h(
          "tbody",
          {},
          shown.map((doc) => docRow(doc)),
        ),
      ),
    );
  };
  const docRow = (doc: DocSummary) => {
    const remove = h(
      "button",
      { type: "button", class: "danger", "aria-label": `${t("delete")} ${doc.fileName}` },
      t("delete"),
    );
    remove.addEventListener("click", () => {
      if (!confirm(t("confirmDelete", { file: doc.fileName }))) return;
      void runAction(context, remove, async () => {
        const result = await context.api.deleteDoc(agentId, doc.fileName);
        await refresh();
        return t("deleted", { file: result.fileName, index: result.index });
      });
    });
    return h(
      "tr",
      { "data-file": doc.fileName },
      h(
        "td",
        { "data-label": t("title") },
        h("a", { href: `#/library/${encoded}/edit/${encodeURIComponent(doc.fileName)}` }, doc.title),
        h("div", { class: "file" }, doc.fileName),
      ),
      h(
        "td",
        { "data-label": t("keywords") },
        doc.keywords.map((keyword) => h("span", { class: "chip" }, keyword)),
      ),
      h("td", { "data-label": t("summary") }, doc.summary),
      h("td", { "data-label": t("lastVerified") }, doc.lastVerified),
      h("td", { "data-label": t("size"), class: "num" }, formatBytes(doc.sizeBytes)),
      h(
        "td",
        {},
        h(
          "div",
          { class: "actions" },
          h("a", { href: `#/library/${encoded}/edit/${encodeURIComponent(doc.fileName)}`, class: "button" }, t("open")),
          remove,
        ),
      ),
    );
  };
  const refresh = async () => {
    list = await context.api.docs(agentId);
    indexText.textContent = list.indexContent;
    draw();
  };
  const rebuild = h("button", { type: "button", id: "rebuild-index" }, t("rebuild"));
  rebuild.addEventListener("click", () => {
    void runAction(context, rebuild, async () => {
      const result = await context.api.rebuildIndex(agentId);
      await refresh();
      return t("rebuilt", { count: result.documentCount });
    });
  });
  search.addEventListener("input", draw);
  replaceChildren(
    context.main,
    h("h1", {}, t("library"), " · ", h("code", {}, agentId)),
    list.enabled ? null : h("p", { class: "notice" }, t("libraryOff")),
    h(
      "div",
      { class: "toolbar" },
      h("label", { for: "doc-search", class: "sr-only" }, t("searchLabel")),
      search,
      h("a", { href: `#/library/${encoded}/new`, class: "button primary" }, t("newDoc")),
      rebuild,
    ),
    count,
    results,
    h("details", {}, h("summary", {}, t("indexFile")), indexText),
  );
  draw();
}
