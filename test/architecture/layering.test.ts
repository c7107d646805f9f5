/**
 * The import graph says the architecture (STYLE.md point 4): the toolhost child never
 * imports the orchestrator, channels or storage; channels never import the orchestrator;
 * the protocol module imports nothing of ours.
 */
import { readFileSync, readdirSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { REAL_REPO_ROOT } from "../helpers/temp-dir.js";

const SRC = join(REAL_REPO_ROOT, "src");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sourceFiles(join(dir, entry.name))
      : entry.name.endsWith(".ts")
        ? [join(dir, entry.name)]
        : [],
  );
}

/** Relative imports of a file, resolved to paths under src/. */
export function localImports(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const specifiers = [
    ...text.matchAll(/(?:import|export)[^'"]*?from\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g),
  ].map((match) => match[1] ?? match[2] ?? "");
  return specifiers.filter((spec) => spec.startsWith(".")).map((spec) => relative(SRC, resolve(dirname(file), spec)));
}

const RULES: { from: string; forbidden: string[] }[] = [
  { from: "toolhost/", forbidden: ["agent/", "channels/", "store/", "admin/", "cli/"] },
  { from: "channels/", forbidden: ["agent/"] },
  { from: "knowledge/", forbidden: ["channels/", "cli/", "admin/"] },
];

describe("layering", () => {
  const files = sourceFiles(SRC);

  it("finds the sources and their imports", () => {
    expect(files.length).toBeGreaterThan(10);
    expect(localImports(join(SRC, "cli", "run-cli.ts"))).toContain("cli/cli-context.js");
  });

  for (const rule of RULES) {
    it(`${rule.from} never imports ${rule.forbidden.join(", ")}`, () => {
      const violations = files
        .filter((file) => relative(SRC, file).startsWith(rule.from))
        .flatMap((file) =>
          localImports(file)
            .filter((target) => rule.forbidden.some((prefix) => target.startsWith(prefix)))
            .map((target) => `${relative(SRC, file)} -> ${target}`),
        );
      expect(violations).toEqual([]);
    });
  }

  it("the toolhost protocol module imports nothing of ours", () => {
    const protocol = join(SRC, "toolhost", "protocol.ts");
    const imports = files.includes(protocol) ? localImports(protocol) : [];
    expect(imports).toEqual([]);
  });
});
