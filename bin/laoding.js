#!/usr/bin/env node
// Production entry: runs the compiled CLI from dist/. `npm install` builds it (prepare).
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const compiled = new URL("../dist/cli/main.js", import.meta.url);
if (!existsSync(fileURLToPath(compiled))) {
  process.stderr.write("laoding: dist/ is missing. Run `npm run build` (or `npm install`) first.\n");
  process.exit(1);
}
await import(compiled.href);
