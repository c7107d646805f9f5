/** Which files the admin page serves, from where, and what it says when the scripts were never built. */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { pageAssets } from "../../src/admin/page-assets.js";
import { tempDir } from "../helpers/temp-dir.js";

function repo(withBuild: boolean): string {
  const root = tempDir("laoding-page-");
  mkdirSync(join(root, "src/admin/page"), { recursive: true });
  writeFileSync(join(root, "src/admin/page/index.html"), '<html lang="__LOCALE__" data-default-locale="__LOCALE__">');
  writeFileSync(join(root, "src/admin/page/style.css"), "body{}");
  writeFileSync(join(root, "secret.js"), "nope");
  if (withBuild) {
    mkdirSync(join(root, "dist/admin-page"), { recursive: true });
    writeFileSync(join(root, "dist/admin-page/app.js"), "console.log(1)");
  }
  return root;
}

describe("admin page assets", () => {
  it("serves index.html with the locale filled in, the stylesheet and the compiled scripts", async () => {
    const assets = pageAssets({ locale: "en", repoRoot: repo(true) });
    expect(await assets("/")).toEqual({
      status: 200,
      type: "text/html; charset=utf-8",
      body: '<html lang="en" data-default-locale="en">',
    });
    expect((await assets("/assets/style.css"))?.body.toString()).toBe("body{}");
    expect(await assets("/assets/app.js")).toMatchObject({ status: 200, type: "text/javascript; charset=utf-8" });
  });

  it("answers nothing for names outside the pattern, so the API's 401/404 applies", async () => {
    const assets = pageAssets({ locale: "zh", repoRoot: repo(true) });
    for (const path of [
      "/assets/../secret.js",
      "/assets/%2e%2e/secret.js",
      "/assets/sub/app.js",
      "/assets/App.js",
      "/assets/missing.css",
      "/secret.js",
      "/v1/agents",
    ]) {
      expect(await assets(path), path).toBeUndefined();
    }
  });

  it("says how to build the scripts when dist/admin-page is missing", async () => {
    const answer = await pageAssets({ locale: "zh", repoRoot: repo(false) })("/assets/app.js");
    expect(answer?.status).toBe(503);
    expect(String(answer?.body)).toContain("npm run build");
  });
});
