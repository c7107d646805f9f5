/** Where a body's charset comes from, in browsers' order, and what a type is turned into. */
import iconv from "iconv-lite";
import { describe, expect, it } from "vitest";
import { contentKind } from "../../../src/toolhost/net/content-kind.js";
import { decodeText, declaredCharset } from "../../../src/toolhost/net/text-decoding.js";

const bytes = (text: string) => Buffer.from(text, "latin1");

describe("declared charset", () => {
  it("takes a byte-order mark first, then the header, then the page's own declaration", () => {
    const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), bytes('<meta charset="gbk">')]);
    expect(declaredCharset(bom, "text/html; charset=big5", "html")).toBe("utf-8");
    expect(declaredCharset(bytes('<meta charset="gbk">'), 'text/html; charset="Big5"', "html")).toBe("big5");
    expect(declaredCharset(bytes('<meta charset="GBK">'), "text/html", "html")).toBe("gbk");
    expect(
      declaredCharset(bytes('<meta http-equiv="content-type" content="text/html;charset=shift_jis">'), null, "html"),
    ).toBe("shift_jis");
    expect(declaredCharset(bytes('<?xml version="1.0" encoding="GB18030"?><a/>'), "application/xml", "text")).toBe(
      "gb18030",
    );
  });

  it("looks for a meta declaration in the first 4 KiB of HTML only, and never in plain text", () => {
    expect(declaredCharset(bytes(`${" ".repeat(5000)}<meta charset="gbk">`), null, "html")).toBeUndefined();
    expect(declaredCharset(bytes('<meta charset="gbk">'), "text/plain", "text")).toBeUndefined();
  });
});

describe("decodeText", () => {
  it("decodes with TextDecoder or iconv-lite, and says when it does not know a charset", async () => {
    expect((await decodeText(iconv.encode("中文", "gbk"), "gbk")).text).toBe("中文");
    expect((await decodeText(Buffer.from([0x82]), "cp437")).text).toBe("é");
    const unknown = await decodeText(Buffer.from("plain"), "x-martian");
    expect(unknown).toEqual({
      text: "plain",
      charset: "utf-8",
      note: 'the page declares the charset "x-martian", which is not known here; decoded as UTF-8',
    });
  });
});

describe("content kind", () => {
  it("sorts types into html, text and refused", () => {
    const none = Buffer.alloc(0);
    expect(contentKind("application/xhtml+xml; charset=utf-8", none).kind).toBe("html");
    for (const type of ["text/markdown", "application/ld+json", "application/rss+xml", "text/csv", "application/yaml"])
      expect(contentKind(type, none).kind).toBe("text");
    expect(contentKind("image/svg+xml", none)).toEqual({
      kind: "unsupported",
      mediaType: "image/svg+xml",
      what: "an image",
    });
    expect(contentKind("video/mp4", none)).toMatchObject({ what: "a video" });
    expect(contentKind(null, bytes("  <!DOCTYPE html><p>x")).kind).toBe("html");
    expect(contentKind(null, bytes("just words")).kind).toBe("text");
    expect(contentKind(null, Buffer.from([1, 0, 2]))).toMatchObject({ kind: "unsupported" });
  });
});
