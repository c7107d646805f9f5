/**
 * The admin page's files, served by the admin server without a token (they hold no data;
 * every API call the page makes carries the token). Three kinds:
 * - `/` is src/admin/page/index.html with the server's BOT_LOCALE filled in;
 * - `/assets/<name>.css` comes from src/admin/page/;
 * - `/assets/<name>.js` is the page's TypeScript compiled by `tsc -p tsconfig.page.json`
 *   into dist/admin-page/ (`npm install` and `npm run build` do it).
 * Names are matched against a strict pattern before any path is built, so no request can
 * name a file outside those two folders.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export type PageAnswer = { status: number; type: string; body: string | Buffer };
export type PageAssets = (pathname: string) => Promise<PageAnswer | undefined>;

/** src/admin/page-assets.ts and dist/admin/page-assets.js sit at the same depth. */
const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));
const ASSET_NAME = /^\/assets\/([a-z0-9-]+)\.(js|css)$/;
const TYPES = {
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  html: "text/html; charset=utf-8",
} as const;

export type PageAssetOptions = { locale: "zh" | "en"; repoRoot?: string };

export function pageAssets(options: PageAssetOptions): PageAssets {
  const root = options.repoRoot ?? REPO_ROOT;
  const sourceDir = join(root, "src/admin/page");
  const compiledDir = join(root, "dist/admin-page");
  return async (pathname) => {
    if (pathname === "/" || pathname === "/index.html") {
      const html = await readFile(join(sourceDir, "index.html"), "utf8");
      return { status: 200, type: TYPES.html, body: html.replaceAll("__LOCALE__", options.locale) };
    }
    const match = ASSET_NAME.exec(pathname);
    if (!match) return undefined;
    const [, name, kind] = match as unknown as [string, string, "js" | "css"];
    const file = kind === "js" ? join(compiledDir, `${name}.js`) : join(sourceDir, `${name}.css`);
    try {
      return { status: 200, type: TYPES[kind], body: await readFile(file) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      if (kind === "js") {
        return {
          status: 503,
          type: "text/plain; charset=utf-8",
          body: `${pathname} is not built: run \`npm run build\` (or \`npm install\`) on the server, then reload\n`,
        };
      }
      return undefined;
    }
  };
}
