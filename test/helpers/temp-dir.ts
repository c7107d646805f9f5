import { chmodSync, cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach } from "vitest";

export const REAL_REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** "test": removed after each test; "file": kept for the whole test file (for beforeAll). */
export type TempScope = "test" | "file";

const created: Record<TempScope, string[]> = { test: [], file: [] };
afterEach(() => {
  for (const dir of created.test.splice(0)) rmSync(dir, { recursive: true, force: true });
});
afterAll(() => {
  for (const dir of created.file.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A fresh temp folder, removed after the test (or file). World-traversable so sandbox uids can enter it. */
export function tempDir(prefix = "laoding-test-", scope: TempScope = "test"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  chmodSync(dir, 0o755);
  created[scope].push(dir);
  return dir;
}

/** A throwaway copy of the repository's configs/ and workspace/seed/, so tests can edit them. */
export function fakeRepo(options: { env?: string; scope?: TempScope } = {}): string {
  const root = tempDir("laoding-repo-", options.scope);
  cpSync(join(REAL_REPO_ROOT, "configs"), join(root, "configs"), { recursive: true });
  cpSync(join(REAL_REPO_ROOT, "workspace", "seed"), join(root, "workspace", "seed"), { recursive: true });
  if (options.env !== undefined) writeFileSync(join(root, "configs", "env"), options.env);
  return root;
}

export function writeFile(path: string, content: string): string {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, content);
  return path;
}
