/**
 * The page-to-Markdown converter on its own: the markup it never parses (scripts,
 * styles, comments, even left open), pages without a body element, the markup budget.
 */
import { describe, expect, it } from "vitest";
import { createHtmlToMarkdown } from "../../../src/toolhost/net/html-to-markdown.js";

const convert = createHtmlToMarkdown();

describe("html to markdown", () => {
  it("finds the content of a page that leaves out <html>, <head> and <body>", async () => {
    const page = await convert(
      '<meta charset="utf-8"><title>Short  page</title><p>Only <em>this</em>.</p>',
      "http://a.test/",
    );
    expect(page).toEqual({ title: "Short page", markdown: "Only _this_.", article: false, cut: false });
    const headOnly = await convert(
      "<html><head><title>T</title></head><p>After the head.</p></html>",
      "http://a.test/",
    );
    expect(headOnly.markdown).toBe("After the head.");
  });

  it("drops scripts, styles, comments and templates before parsing, an unclosed one with the rest of the page", async () => {
    const page = await convert(
      `<body><p>Kept one.</p><script type="module">if (a < b) document.write("<p>SCRIPT</p>")</script><!-- <p>COMMENT</p> -->
       <STYLE>p { x: "</p>" }</STYLE><template><p>TEMPLATE</p></template><script-widget>Custom kept.</script-widget>
       <p>Kept two.</p><script>${"<p>".repeat(10_000)} never closed`,
      "http://a.test/",
    );
    expect(page.markdown).toBe("Kept one.\n\nCustom kept.\n\nKept two.");
  });

  it("resolves links against <base href>, and drops javascript: links and data: images", async () => {
    const page = await convert(
      '<head><base href="https://cdn.test/docs/"></head><body><a href="guide.html">guide</a> <a href="javascript:alert(1)">click</a> <img alt="dot" src="data:image/png;base64,AAAA"> <img alt="pic" src="/p.png"></body>',
      "http://a.test/page",
    );
    expect(page.markdown).toMatch(
      /^\[guide\]\(https:\/\/cdn\.test\/docs\/guide\.html\) click +!\[pic\]\(https:\/\/cdn\.test\/p\.png\)$/,
    );
  });

  it("converts at most maxChars of markup and says so", async () => {
    const page = await convert(`<body><p>${"word ".repeat(100)}</p><p>LATE</p></body>`, "http://a.test/", {
      maxChars: 200,
    });
    expect(page.cut).toBe(true);
    expect(page.markdown).toContain("word");
    expect(page.markdown).not.toContain("LATE");
  });
});
