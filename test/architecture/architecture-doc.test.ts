/**
 * docs/architecture.md stays a true map: its folder table names every folder under src/
 * (recursively) and no folder that does not exist, and its table section names every
 * store table (src/store/tables.ts) and no table that is not one.
 */
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { STORE_TABLES } from "../../src/store/tables.js";
import { REAL_REPO_ROOT } from "../helpers/temp-dir.js";

const DOC = readFileSync(join(REAL_REPO_ROOT, "docs", "architecture.md"), "utf8");

/** Every folder below `dir`, as repository paths (`src/agent/turn`), recursively. */
function foldersUnder(dir: string): string[] {
  return readdirSync(join(REAL_REPO_ROOT, dir), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((entry) => {
      const path = `${dir}/${entry.name}`;
      return [path, ...foldersUnder(path)];
    });
}

/** The text of the `## <title>` section, up to the next `## ` heading. */
function section(title: string): string {
  const start = DOC.indexOf(`\n## ${title}\n`);
  if (start < 0) throw new Error(`docs/architecture.md has no "## ${title}" section`);
  const rest = DOC.slice(start + 1);
  const end = rest.indexOf("\n## ", 1);
  return end < 0 ? rest : rest.slice(0, end);
}

/** The first cell of each table row whose first cell is one code span: `| \`name\` | ...`. */
function firstCells(text: string): string[] {
  return [...text.matchAll(/^\|\s*`([^`]+)`\s*\|/gm)].map((match) => match[1] ?? "");
}

describe("docs/architecture.md", () => {
  const rows = firstCells(section("Folders"));

  it("reads its folder table and finds src/'s folders", () => {
    expect(rows.length).toBeGreaterThan(10);
    expect(foldersUnder("src")).toContain("src/toolhost/shell");
  });

  it("names every folder under src/ in its folder table", () => {
    const missing = foldersUnder("src").filter((folder) => !rows.includes(folder));
    expect(missing, `folders missing from the folder table of docs/architecture.md: ${missing.join(", ")}`).toEqual([]);
  });

  it("names no folder that does not exist", () => {
    const folders = new Set(foldersUnder("src"));
    const gone = rows.filter((row) => !folders.has(row));
    expect(gone, `rows of the folder table naming folders that do not exist: ${gone.join(", ")}`).toEqual([]);
  });

  it("names each folder once", () => {
    const twice = rows.filter((row, index) => rows.indexOf(row) !== index);
    expect(twice, `folders named twice in the folder table: ${twice.join(", ")}`).toEqual([]);
  });

  it("says where every store table is written, and names no other table", () => {
    const tables = firstCells(section("Where each store table is written"));
    const known: readonly string[] = STORE_TABLES;
    const missing = STORE_TABLES.filter((table) => !tables.includes(table));
    const unknown = tables.filter((table) => !known.includes(table));
    expect(missing, `store tables missing from docs/architecture.md: ${missing.join(", ")}`).toEqual([]);
    expect(unknown, `rows naming tables that src/store/tables.ts does not list: ${unknown.join(", ")}`).toEqual([]);
  });
});
