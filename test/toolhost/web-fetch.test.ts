/**
 * Issue 26, item 4: web.fetch through the egress proxy (a stand-in speaking its
 * contract) against a real loopback HTTP server: readable Markdown from an article page,
 * charsets (GBK among them), redirects re-checked and bounded, a refused host, a 50 MB
 * body cut while it streams, binary content refused, a slow server timed out.
 */
import { readdirSync, readFileSync } from "node:fs";
import type { ServerResponse } from "node:http";
import { join } from "node:path";
import iconv from "iconv-lite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createProxiedFetch, directFetch } from "../../src/toolhost/net/proxied-fetch.js";
import { DEFAULT_TOOL_LIMITS, type ToolContext, type ToolLimits } from "../../src/toolhost/tools/define-tool.js";
import { createWebFetchTool, WEB_FETCH_DEFAULT_MAX_BYTES } from "../../src/toolhost/tools/web-fetch.js";
import { REAL_REPO_ROOT, tempDir } from "../helpers/temp-dir.js";
import { REFUSED_HOST, refusalReason, type StandInProxy, startStandInProxy } from "./net/stand-in-proxy.js";
import { makeTestCertificate, type Origin, startOrigin, type TestCertificate } from "./net/test-origin.js";

const LIMITS: ToolLimits = {
  ...DEFAULT_TOOL_LIMITS,
  outputMaxBytes: 200_000,
  shellTimeoutMs: 5_000,
  shellMaxTimeoutMs: 10_000,
};
const BIG_BODY_BYTES = 50 * 1024 * 1024;

const ARTICLE_PAGE = `<!doctype html>
<html><head><title>Release notes — Example</title><meta charset="utf-8">
<style>body { color: red }</style><script>window.tracking = "SCRIPT-CONTENT";</script></head>
<body>
<nav class="menu"><a href="/">Home</a> <a href="/pricing">Pricing</a> <a href="/login">NAV-JUNK-LOGIN</a></nav>
<div class="sidebar advertisement">Buy now! SIDEBAR-JUNK</div>
<main><article>
<h1>Version 2.0 is out</h1>
${Array.from({ length: 6 }, (_, index) => `<p>Paragraph ${index + 1} explains what changed in this release, why it matters to the people who use it every day, and how to upgrade without losing any of their settings.</p>`).join("\n")}
<p>Read the <a href="/docs/upgrade">upgrade guide</a> and see <img src="diagram.png" alt="the diagram">.</p>
<pre><code>npm install example@2</code></pre>
<ul><li>Faster start</li><li>Smaller memory</li></ul>
</article></main>
<footer>Copyright FOOTER-JUNK</footer>
<script>document.write("MORE-SCRIPT")</script>
</body></html>`;

const LINKS_PAGE = `<html><head><title>Index</title></head><body>
<h2>Files</h2><ul><li><a href="a.txt">a.txt</a></li><li><a href="b.txt">b.txt</a></li></ul>
<noscript>NOSCRIPT-JUNK</noscript><p>Two files.</p></body></html>`;

const GBK_TEXT = "欢迎来到中文页面，这里的文字用 GBK 编码。";

let proxy: StandInProxy;
let origin: Origin;
let secure: Origin;
let bigBodyWritten: Promise<number>;
let host: string;
let endlessPdfClosed: Promise<void> | undefined;
let certificate: TestCertificate;

function send(response: ServerResponse, type: string | undefined, body: string | Buffer, status = 200): void {
  response.writeHead(status, type === undefined ? {} : { "content-type": type });
  response.end(body);
}

beforeAll(async () => {
  const dir = tempDir("laoding-web-fetch-", "file");
  proxy = await startStandInProxy(join(dir, "egress.sock"));
  certificate = makeTestCertificate(dir, "secure.test");
  const handler: Parameters<typeof startOrigin>[0] = (request, response) => {
    const path = new URL(request.url ?? "/", "http://origin").pathname;
    const hop = /^\/hop\/(\d+)$/.exec(path);
    if (hop) {
      const left = Number(hop[1]);
      if (left === 0) return send(response, "text/plain; charset=utf-8", "end of the chain");
      response.writeHead(302, { location: `/hop/${left - 1}` });
      return response.end();
    }
    switch (path) {
      case "/article":
        return send(response, "text/html; charset=utf-8", ARTICLE_PAGE);
      case "/links":
        return send(response, "text/html", LINKS_PAGE);
      case "/gbk-meta":
        return send(
          response,
          "text/html",
          iconv.encode(
            `<html><head><meta http-equiv="Content-Type" content="text/html; charset=gbk"><title>中文标题</title></head><body><p>${GBK_TEXT}</p></body></html>`,
            "gbk",
          ),
        );
      case "/gbk-charset":
        return send(
          response,
          "text/html; charset=GB2312",
          iconv.encode(`<meta charset="gb2312"><p>${GBK_TEXT}</p>`, "gbk"),
        );
      case "/big5":
        return send(response, "text/plain; charset=big5", iconv.encode("繁體中文測試", "big5"));
      case "/shift-jis":
        return send(response, "text/plain; charset=Shift_JIS", iconv.encode("日本語のテキスト", "shift_jis"));
      case "/gb18030":
        return send(response, "text/plain; charset=gb18030", iconv.encode("𠀀 and 中文", "gb18030"));
      case "/cp437":
        return send(response, "text/plain; charset=cp437", Buffer.from([0x82, 0x74, 0x82]));
      case "/json":
        return send(response, "application/json", '{"ok":true,"items":[1,2]}');
      case "/csv":
        return send(response, "text/csv", "a,b\n1,2\n");
      case "/pdf":
        return send(response, "application/pdf", "%PDF-1.7\n%binary");
      case "/untyped-pdf":
        return send(response, undefined, "%PDF-1.4\nsomething");
      case "/image":
        return send(response, "image/png", Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0]));
      case "/zip":
        return send(response, "application/zip", Buffer.from([0x50, 0x4b, 3, 4]));
      case "/octets":
        return send(response, "application/octet-stream", Buffer.from([1, 2, 3]));
      case "/missing":
        return send(
          response,
          "text/html",
          `<html><body><h1>Not Found</h1><p>No page at this address. ${"Filler words. ".repeat(200)}</p></body></html>`,
          404,
        );
      case "/broken":
        return send(response, "text/plain", "the database is down", 503);
      case "/to-refused":
        response.writeHead(301, { location: `http://${REFUSED_HOST}/secret` });
        return response.end();
      case "/to-ftp":
        response.writeHead(302, { location: "ftp://files.example/x" });
        return response.end();
      case "/slow":
        // Headers, then nothing: the body never completes.
        response.writeHead(200, { "content-type": "text/plain" });
        response.write("first bytes");
        return;
      case "/endless-pdf": {
        // Headers, a first chunk, then nothing: only the client can end this connection.
        response.writeHead(200, { "content-type": "application/pdf" });
        response.write("%PDF-1.7\n");
        endlessPdfClosed = new Promise((resolve) => response.once("close", () => resolve()));
        return;
      }
      case "/huge": {
        response.writeHead(200, { "content-type": "text/plain", "content-length": String(BIG_BODY_BYTES) });
        const chunk = Buffer.alloc(64 * 1024, "a");
        let written = 0;
        bigBodyWritten = new Promise((resolve) => response.once("close", () => resolve(written)));
        const pump = () => {
          while (written < BIG_BODY_BYTES) {
            written += chunk.length;
            if (!response.write(chunk)) return;
          }
          response.end();
        };
        response.on("drain", pump);
        return pump();
      }
      default:
        return send(response, "text/plain", "not here", 404);
    }
  };
  origin = await startOrigin(handler);
  secure = await startOrigin(handler, certificate);
  host = `allowed.test:${origin.port}`;
});

afterAll(async () => {
  await Promise.all([proxy?.close(), origin?.close(), secure?.close()]);
});

function context(signal = new AbortController().signal, limits: ToolLimits = LIMITS): ToolContext {
  // web.fetch touches neither the sandbox nor the shell.
  return { cwd: "/", sandbox: undefined as never, shell: undefined as never, limits, signal };
}

function webFetch() {
  return createWebFetchTool({ fetch: createProxiedFetch({ socketPath: proxy.socketPath }) });
}

async function call(args: Record<string, unknown>, limits?: ToolLimits) {
  const parsed = webFetch().inputSchema.parse(args);
  return webFetch().execute(parsed, context(undefined, limits));
}

async function failure(args: Record<string, unknown>) {
  const error = await call(args).then(
    (result) => {
      throw new Error(`expected a failure, got ${result.output.slice(0, 200)}`);
    },
    (caught: unknown) => caught,
  );
  return error as { code: string; message: string };
}

describe("web.fetch", () => {
  it("is declared read-only, idempotent and open-world, with its deadline argument", () => {
    const tool = webFetch();
    expect(tool.name).toBe("web.fetch");
    expect(tool.hints).toEqual({
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: true,
    });
    expect(tool.deadline?.argument).toBe("timeout_ms");
    expect(tool.deadline?.maxMs(LIMITS)).toBe(LIMITS.shellMaxTimeoutMs);
    expect(Object.keys((tool.jsonSchema.properties ?? {}) as object)).toEqual(["url", "max_bytes", "timeout_ms"]);
  });

  it("loads the page libraries only when a page needs them: no static import of them in the child", () => {
    const sources = readdirSync(join(REAL_REPO_ROOT, "src/toolhost"), { recursive: true, encoding: "utf8" })
      .filter((file) => file.endsWith(".ts"))
      .map((file) => [file, readFileSync(join(REAL_REPO_ROOT, "src/toolhost", file), "utf8")] as const);
    const staticImport = /^import\s+(?!type\b)[^;]*from\s+"(linkedom|@mozilla\/readability|turndown|iconv-lite)"/m;
    expect(sources.filter(([, text]) => staticImport.test(text)).map(([file]) => file)).toEqual([]);
    expect(sources.find(([file]) => file.endsWith("html-to-markdown.ts"))?.[1]).toContain('import("linkedom")');
  });

  it("turns an article page into Markdown: title and URL on top, the article without navigation, scripts or styles", async () => {
    const { output, truncated } = await call({ url: `http://${host}/article` });
    expect(truncated).toBe(false);
    expect(output.startsWith(`# Release notes — Example\nURL: http://${host}/article\n\n`)).toBe(true);
    expect(output).toContain("Paragraph 6 explains what changed");
    expect(output).toContain(`[upgrade guide](http://${host}/docs/upgrade)`);
    expect(output).toContain(`![the diagram](http://${host}/diagram.png)`);
    expect(output).toContain("```\nnpm install example@2\n```");
    expect(output).toMatch(/^-\s+Faster start$/m);
    for (const junk of ["NAV-JUNK", "SIDEBAR-JUNK", "FOOTER-JUNK", "SCRIPT-CONTENT", "MORE-SCRIPT", "color: red"])
      expect(output).not.toContain(junk);
  });

  it("converts the whole body of a page without an article, still without scripts", async () => {
    const { output } = await call({ url: `http://${host}/links` });
    expect(output).toContain("# Index\n");
    expect(output).toContain(`[a.txt](http://${host}/a.txt)`);
    expect(output).toContain("Two files.");
    expect(output).not.toContain("NOSCRIPT-JUNK");
  });

  it("decodes GBK from a meta tag, GB2312 from the header, Big5, Shift_JIS and GB18030", async () => {
    const meta = await call({ url: `http://${host}/gbk-meta` });
    expect(meta.output).toContain("# 中文标题");
    expect(meta.output).toContain(GBK_TEXT);
    expect((await call({ url: `http://${host}/gbk-charset` })).output).toContain(GBK_TEXT);
    expect((await call({ url: `http://${host}/big5` })).output).toContain("繁體中文測試");
    expect((await call({ url: `http://${host}/shift-jis` })).output).toContain("日本語のテキスト");
    expect((await call({ url: `http://${host}/gb18030` })).output).toContain("𠀀 and 中文");
    // Not a WHATWG encoding: iconv-lite decodes it.
    expect((await call({ url: `http://${host}/cp437` })).output).toMatch(/\n\nété$/);
  });

  it("returns JSON and CSV as they are, with their type", async () => {
    const json = await call({ url: `http://${host}/json` });
    expect(json.output).toBe(`URL: http://${host}/json\nContent-Type: application/json\n\n{"ok":true,"items":[1,2]}`);
    expect((await call({ url: `http://${host}/csv` })).output).toContain("Content-Type: text/csv\n\na,b\n1,2\n");
  });

  it("follows 5 redirects, each through the proxy, and refuses a sixth", async () => {
    const followed = await call({ url: `http://${host}/hop/5` });
    expect(followed.output).toBe(`URL: http://${host}/hop/0\nContent-Type: text/plain\n\nend of the chain`);
    for (let left = 5; left >= 0; left -= 1) expect(proxy.requests).toContain(`GET http://${host}/hop/${left}`);

    const tooMany = await failure({ url: `http://${host}/hop/6` });
    expect(tooMany.code).toBe("NETWORK_FAILED");
    expect(tooMany.message).toBe(
      `http://${host}/hop/6 redirected more than 5 times; the next redirect pointed to http://${host}/hop/0 (fetch it directly if it is still wanted)`,
    );
  });

  it("reports a redirect to a refused host as NETWORK_REFUSED with the proxy's reason", async () => {
    const refused = await failure({ url: `http://${host}/to-refused` });
    expect(refused).toMatchObject({ code: "NETWORK_REFUSED", message: refusalReason(REFUSED_HOST) });
    const direct = await failure({ url: `https://${REFUSED_HOST}/` });
    expect(direct).toMatchObject({ code: "NETWORK_REFUSED", message: refusalReason(REFUSED_HOST) });
  });

  it("refuses a redirect to a scheme other than http and https", async () => {
    const error = await failure({ url: `http://${host}/to-ftp` });
    expect(error.code).toBe("NETWORK_FAILED");
    expect(error.message).toContain("ftp://files.example/x is ftp; web.fetch fetches http and https only");
  });

  it("cuts a 50 MB body at max_bytes while it streams, and stops the download", async () => {
    const { output, truncated } = await call({ url: `http://${host}/huge` }, { ...LIMITS, outputMaxBytes: 4_000 });
    expect(truncated).toBe(true);
    expect(output).toContain(`body cut at ${WEB_FETCH_DEFAULT_MAX_BYTES} bytes of ${BIG_BODY_BYTES}`);
    // The server saw its connection closed long before the end of the body.
    expect(await bigBodyWritten).toBeLessThan(BIG_BODY_BYTES / 2);

    const small = await call({ url: `http://${host}/huge`, max_bytes: 1000 }, { ...LIMITS, outputMaxBytes: 4_000 });
    expect(small.output).toBe(
      `URL: http://${host}/huge\nContent-Type: text/plain\n\n${"a".repeat(1000)}\n\n…[body cut at 1000 bytes of ${BIG_BODY_BYTES}; max_bytes up to 10485760 reads more]`,
    );
  });

  it("ends the connection of a body it refuses, so it holds none of the agent's proxy connections", async () => {
    const error = await failure({ url: `http://${host}/endless-pdf` });
    expect(error.code).toBe("UNSUPPORTED_CONTENT");
    // The origin sees its response closed although it never ended it.
    await expect(endlessPdfClosed).resolves.toBeUndefined();
  });

  it("refuses PDFs, images, archives and octet streams with UNSUPPORTED_CONTENT naming the type", async () => {
    const cases: [string, string][] = [
      ["/pdf", "application/pdf, a PDF"],
      ["/untyped-pdf", "application/pdf, a PDF (no Content-Type; recognised by its first bytes)"],
      ["/image", "image/png, an image"],
      ["/zip", "application/zip, an archive"],
      ["/octets", "application/octet-stream, binary data"],
    ];
    for (const [path, what] of cases) {
      const error = await failure({ url: `http://${host}${path}` });
      expect(error.code).toBe("UNSUPPORTED_CONTENT");
      expect(error.message).toBe(
        `http://${host}${path} is ${what}; web.fetch returns text only: HTML pages, plain text, Markdown, JSON, XML, CSV`,
      );
    }
  });

  it("answers an HTTP error with its status and a short excerpt of the body", async () => {
    const missing = await call({ url: `http://${host}/missing` });
    expect(missing.output).toMatch(
      new RegExp(
        `^HTTP 404 Not Found from http://${host}/missing\nContent-Type: text/html\n\n# Not Found\n\nNo page at this address.`,
      ),
    );
    expect(missing.output.length).toBeLessThan(1_200);
    expect(missing.output.endsWith("…")).toBe(true);
    const broken = await call({ url: `http://${host}/broken` });
    expect(broken.output).toBe(
      `HTTP 503 Service Unavailable from http://${host}/broken\nContent-Type: text/plain\n\nthe database is down`,
    );
  });

  it("times out a server that never finishes, and stops when the call is cancelled", async () => {
    const slow = await failure({ url: `http://${host}/slow`, timeout_ms: 200 });
    expect(slow).toMatchObject({
      code: "TIMEOUT",
      message: `http://${host}/slow did not answer completely within 200 ms`,
    });

    const cancel = new AbortController();
    const pending = webFetch().execute({ url: `http://${host}/slow` }, context(cancel.signal));
    setTimeout(() => cancel.abort(), 50);
    await expect(pending).rejects.toMatchObject({
      code: "TIMEOUT",
      message: "the call was cancelled before the page arrived",
    });
  });

  it("reports an unreachable host as NETWORK_FAILED", async () => {
    const closed = await startOrigin(() => {});
    await closed.close();
    const error = await failure({ url: `http://gone.test:${closed.port}/` });
    expect(error).toMatchObject({
      code: "NETWORK_FAILED",
      message: `gone.test:${closed.port} could not be reached: ECONNREFUSED`,
    });
  });

  it("refuses URLs that are not http or https, carry credentials, or are not URLs", async () => {
    expect(await failure({ url: "file:///etc/passwd" })).toMatchObject({
      code: "INVALID_ARGS",
      message: "url file:///etc/passwd is file; web.fetch fetches http and https only",
    });
    expect((await failure({ url: `http://user:pw@${host}/` })).message).toContain(
      "must not carry a user name or password",
    );
    expect((await failure({ url: "not a url" })).code).toBe("INVALID_ARGS");
    expect(webFetch().inputSchema.safeParse({ url: `http://${host}/${"x".repeat(4096)}` }).success).toBe(false);
    expect(webFetch().inputSchema.safeParse({ url: `http://${host}/`, max_bytes: 11 * 1024 * 1024 }).success).toBe(
      false,
    );
  });

  it("fetches https pages through the tunnel, and works the same with directFetch", async () => {
    const tls = createWebFetchTool({
      fetch: createProxiedFetch({ socketPath: proxy.socketPath, tls: { ca: certificate.cert } }),
    });
    const page = await tls.execute({ url: `https://secure.test:${secure.port}/article` }, context());
    expect(page.output).toContain(`URL: https://secure.test:${secure.port}/article`);
    expect(page.output).toContain("Paragraph 1 explains");

    const direct = createWebFetchTool({ fetch: directFetch });
    const json = await direct.execute({ url: `http://127.0.0.1:${origin.port}/json` }, context());
    expect(json.output).toContain('{"ok":true,"items":[1,2]}');
  });
});
