/**
 * The agent reads as small parts (issue 31): no file under src/agent over 250 lines, no
 * function over 80 (declarations, expressions, arrows and methods alike, counted from the
 * node's first line to its last). Parsed with the TypeScript compiler, not with regexes,
 * so a function is whatever the language says it is.
 */
import { readFileSync, readdirSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { REAL_REPO_ROOT } from "../helpers/temp-dir.js";

const AGENT = join(REAL_REPO_ROOT, "src", "agent");
const MAX_FILE_LINES = 250;
const MAX_FUNCTION_LINES = 80;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sourceFiles(join(dir, entry.name))
      : entry.name.endsWith(".ts")
        ? [join(dir, entry.name)]
        : [],
  );
}

function isFunction(node: ts.Node): node is ts.FunctionLikeDeclaration {
  return (
    ts.isFunctionDeclaration(node) ||
    ts.isFunctionExpression(node) ||
    ts.isArrowFunction(node) ||
    ts.isMethodDeclaration(node) ||
    ts.isConstructorDeclaration(node) ||
    ts.isGetAccessorDeclaration(node) ||
    ts.isSetAccessorDeclaration(node)
  );
}

/** A function's name as a reader finds it: its own, or the variable or property it is assigned to. */
function functionName(node: ts.FunctionLikeDeclaration, source: ts.SourceFile): string {
  if (node.name) return node.name.getText(source);
  const parent = node.parent;
  if ((ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) && parent.name)
    return parent.name.getText(source);
  return "(anonymous)";
}

/** Every function in `file` longer than the limit, as `path:line name (N lines)`. */
function longFunctions(file: string, text = readFileSync(file, "utf8")): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (isFunction(node) && node.body) {
      const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = end - start + 1;
      if (lines > MAX_FUNCTION_LINES)
        found.push(`${relative(REAL_REPO_ROOT, file)}:${start + 1} ${functionName(node, source)} (${lines} lines)`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function lineCount(file: string): number {
  const text = readFileSync(file, "utf8");
  return text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
}

describe("agent size", () => {
  const files = sourceFiles(AGENT);

  it("finds the agent's sources", () => {
    expect(files.length).toBeGreaterThan(20);
  });

  it(`no file under src/agent is over ${MAX_FILE_LINES} lines`, () => {
    const long = files.flatMap((file) => {
      const lines = lineCount(file);
      return lines > MAX_FILE_LINES ? [`${relative(REAL_REPO_ROOT, file)} (${lines} lines)`] : [];
    });
    expect(long).toEqual([]);
  });

  it(`no function under src/agent is over ${MAX_FUNCTION_LINES} lines`, () => {
    expect(files.flatMap((file) => longFunctions(file))).toEqual([]);
  });

  it("finds a long arrow function or method, and names it", () => {
    const body = (lines: number) =>
      Array.from({ length: lines }, (_, index) => `  const line${index} = ${index};`).join("\n");
    const file = join(AGENT, "probe.ts");
    const probe = [
      `export const tooLong = () => {\n${body(MAX_FUNCTION_LINES - 1)}\n};`,
      `export const fits = () => {\n${body(MAX_FUNCTION_LINES - 2)}\n};`,
      `class Probe {\n  method() {\n${body(MAX_FUNCTION_LINES)}\n  }\n}`,
    ].join("\n");
    expect(longFunctions(file, probe)).toEqual([
      `src/agent/probe.ts:1 tooLong (${MAX_FUNCTION_LINES + 1} lines)`,
      `src/agent/probe.ts:${2 * MAX_FUNCTION_LINES + 3} method (${MAX_FUNCTION_LINES + 2} lines)`,
    ]);
  });
});
