/** The page's editor splits a document into form fields and body and joins it back without losing lines. */
import { describe, expect, it } from "vitest";
import { parseLibraryDoc } from "../../src/knowledge/library/library-doc.js";
import { joinDoc, splitDoc } from "../../src/admin/page/frontmatter.js";

describe("admin page frontmatter form", () => {
  it("splits the known fields, keeps other lines as written, and joins back what the index reads", () => {
    const doc = splitDoc(
      '---\ntitle: Deploy notes\nkeywords: deploy, ssh\nowner: ops   # who keeps it\nsummary: "a: b"\nlast_verified: 2026-03-02\n---\nUse the script.\n',
    );
    expect(doc.fields).toEqual({
      title: "Deploy notes",
      keywords: "deploy, ssh",
      summary: "a: b",
      applicable: "",
      last_verified: "2026-03-02",
    });
    expect(doc.otherLines).toEqual(["owner: ops   # who keeps it"]);
    expect(doc.body).toBe("Use the script.\n");
    doc.fields.summary = "Run: deploy.sh #1";
    doc.fields.applicable = "生产环境";
    const text = joinDoc(doc);
    expect(text).toBe(
      '---\ntitle: Deploy notes\nkeywords: deploy, ssh\nsummary: "Run: deploy.sh #1"\napplicable: 生产环境\nlast_verified: 2026-03-02\nowner: ops   # who keeps it\n---\nUse the script.\n',
    );
    // The server's own parser reads what the form wrote.
    expect(parseLibraryDoc("2026-03-01-deploy-notes.md", text)).toMatchObject({
      title: "Deploy notes",
      keywords: ["deploy", "ssh"],
      summary: "Run: deploy.sh #1",
      applicable: "生产环境",
      lastVerified: "2026-03-02",
    });
    expect(splitDoc(text)).toEqual(doc);
  });

  it("a document without frontmatter is all body, and an empty form writes only the body", () => {
    const doc = splitDoc("just text\n");
    expect(doc.body).toBe("just text\n");
    expect(joinDoc(doc)).toBe("just text\n");
    expect(joinDoc({ ...doc, body: "no newline" })).toBe("no newline\n");
  });
});
