/**
 * Creates or edits one document: the frontmatter fields as a form, the body as text.
 * Unsaved edits are guarded: the shell asks before an in-page navigation, and the browser
 * asks before a reload or closing the tab.
 */
import { ApiError } from "./api.js";
import { runAction, load, type ViewContext } from "./context.js";
import { h } from "./dom.js";
import { emptyDoc, FORM_FIELDS, joinDoc, splitDoc, type EditableDoc, type FormField } from "./frontmatter.js";
import { t, type MessageKey } from "./i18n.js";

/** The server's rule (docs/admin-api.md), checked here too so a typo is caught before sending. */
const DOC_NAME = /^\d{4}-\d{2}-\d{2}-[\p{L}\p{N}-]+\.md$/u;
const LABELS: Record<FormField, MessageKey> = {
  title: "title",
  keywords: "keywords",
  summary: "summary",
  applicable: "applicable",
  last_verified: "lastVerified",
};

export function editorView(context: ViewContext, agentId: string, fileName: string | null): Promise<void> {
  if (fileName === null) {
    const today = new Date().toISOString().slice(0, 10);
    const doc = emptyDoc();
    doc.fields.last_verified = today;
    renderEditor(context, agentId, null, `${today}-`, doc);
    return Promise.resolve();
  }
  return load(
    context,
    () => context.api.readDoc(agentId, fileName),
    (read) => renderEditor(context, agentId, read.fileName, read.fileName, splitDoc(read.content)),
  );
}

function renderEditor(
  context: ViewContext,
  agentId: string,
  existing: string | null,
  initialName: string,
  doc: EditableDoc,
): void {
  const libraryHash = `#/library/${encodeURIComponent(agentId)}`;
  const nameInput = h("input", {
    id: "field-fileName",
    name: "fileName",
    value: initialName,
    required: true,
    readonly: existing !== null,
    spellcheck: "false",
    "aria-describedby": "fileName-help",
  });
  const inputs = Object.fromEntries(
    FORM_FIELDS.map((field) => [
      field,
      h("input", {
        id: `field-${field}`,
        name: field,
        value: doc.fields[field],
        placeholder: field === "last_verified" ? "YYYY-MM-DD" : undefined,
      }),
    ]),
  ) as Record<FormField, HTMLInputElement>;
  const other = h("textarea", { id: "field-other", rows: 3, spellcheck: "false" }, doc.otherLines.join("\n"));
  const body = h("textarea", { id: "field-body", rows: 16 }, doc.body);
  const current = (): EditableDoc => ({
    fields: Object.fromEntries(FORM_FIELDS.map((field) => [field, inputs[field].value])) as Record<FormField, string>,
    otherLines: other.value.split("\n").filter((line) => line.trim() !== ""),
    body: body.value,
  });
  let saved = joinDoc(doc) + "\u0000" + initialName;
  const dirty = () => joinDoc(current()) + "\u0000" + nameInput.value !== saved;
  const mark = h("span", { class: "unsaved", hidden: true }, t("unsavedMark"));
  const save = h("button", { type: "submit", class: "primary" }, t("save"));
  const form = h(
    "form",
    { class: "editor", novalidate: true },
    h("label", { for: "field-fileName" }, t("fileName")),
    nameInput,
    h("small", { id: "fileName-help" }, t("fileNameHelp")),
    FORM_FIELDS.map((field) => [
      h(
        "label",
        { for: `field-${field}` },
        t(LABELS[field]),
        field === "keywords" ? h("small", {}, ` (${t("keywordsHelp")})`) : null,
      ),
      inputs[field],
    ]),
    doc.otherLines.length > 0 ? [h("label", { for: "field-other" }, t("otherFields")), other] : null,
    h("label", { for: "field-body" }, t("body")),
    body,
    h("div", { class: "toolbar" }, save, h("a", { href: libraryHash, class: "button" }, t("cancel")), mark),
  );
  form.addEventListener("input", () => {
    mark.hidden = !dirty();
  });
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const fileName = nameInput.value.trim();
    void runAction(context, save, async () => {
      if (!DOC_NAME.test(fileName) || fileName === "INDEX.md")
        throw new Error(`${t("fileName")}: ${t("fileNameHelp")}`);
      if (existing === null && (await exists(context, agentId, fileName)))
        throw new Error(t("docExists", { file: fileName }));
      const content = joinDoc(current());
      const result = await context.api.writeDoc(agentId, fileName, content);
      saved = content + "\u0000" + nameInput.value;
      context.setUnsavedCheck(null);
      context.navigate(libraryHash);
      return t("saved", { file: result.fileName, index: result.index });
    });
  });
  context.setUnsavedCheck(dirty);
  context.main.replaceChildren(h("h1", {}, existing ?? t("newDoc"), " · ", h("code", {}, agentId)), form);
  (existing === null ? nameInput : inputs.title).focus();
}

async function exists(context: ViewContext, agentId: string, fileName: string): Promise<boolean> {
  try {
    await context.api.readDoc(agentId, fileName);
    return true;
  } catch (error) {
    if (error instanceof ApiError && error.code === "DOC_NOT_FOUND") return false;
    throw error;
  }
}
