import { execFileSync } from "node:child_process";
import { closeSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { isWithin, PathSandbox } from "../../src/toolhost/sandbox/path-sandbox.js";
import type { ToolError } from "../../src/toolhost/tool-error.js";
import { openInsideForRead } from "../../src/toolhost/tools/file-access.js";
import { tempDir } from "../helpers/temp-dir.js";

function setup() {
  const base = tempDir();
  const mine = join(base, "agent1");
  const skills = join(base, "skills");
  for (const dir of [mine, join(base, "agent10"), join(base, "agent1_evil"), skills])
    mkdirSync(dir, { recursive: true });
  const sandbox = new PathSandbox([
    { path: mine, writable: true, label: "working tree" },
    { path: skills, writable: false, label: "base skills" },
  ]);
  return { base, mine, skills, sandbox };
}

describe("path sandbox", () => {
  it("compares by segments, never by string prefix", () => {
    expect(isWithin("/a/agent1", "/a/agent1")).toBe(true);
    expect(isWithin("/a/agent1", "/a/agent1/x/y")).toBe(true);
    expect(isWithin("/a/agent1", "/a/agent10")).toBe(false);
    expect(isWithin("/a/agent1", "/a/agent1_evil/x")).toBe(false);
    expect(isWithin("/a/agent1", "/a")).toBe(false);
    expect(isWithin("/a/agent1", "/a/agent1/../agent10")).toBe(false);
    expect(isWithin("/a/agent1/", "/a/agent10")).toBe(false);
    expect(isWithin("/a/agent1/", "/a/agent1/x")).toBe(true);
    expect(isWithin("/a/./agent1", "/a/agent1/x")).toBe(true);
    expect(isWithin("/a/agent1", "/a//agent1/x")).toBe(true);
    expect(isWithin("/", "/etc/passwd")).toBe(true);
    expect(isWithin("/a/agent1", "a/agent1/x")).toBe(false);
  });

  it("resolves relative paths against the working folder only", () => {
    const { mine, sandbox } = setup();
    mkdirSync(join(mine, "chat"));
    expect(sandbox.resolve("notes/a.md", join(mine, "chat"), "write").realPath).toBe(
      join(mine, "chat", "notes", "a.md"),
    );
    expect(() => sandbox.resolve("../../agent10/x", join(mine, "chat"), "read")).toThrow(/outside/);
  });

  it("refuses NUL bytes, read-only roots for writes, links out and dangling links", () => {
    const { base, mine, skills, sandbox } = setup();
    expect(() => sandbox.resolve("a\0b", mine, "read")).toThrow(/NUL/);
    writeFileSync(join(skills, "SKILL.md"), "x");
    expect(sandbox.resolve(join(skills, "SKILL.md"), mine, "read").root.label).toBe("base skills");
    expect(() => sandbox.resolve(join(skills, "SKILL.md"), mine, "write")).toThrow(/read-only/);
    symlinkSync(join(base, "agent10"), join(mine, "out"));
    expect(() => sandbox.resolve("out/file", mine, "write")).toThrow(/outside/);
    symlinkSync(join(base, "agent10", "nothing-yet"), join(mine, "dangling"));
    expect(() => sandbox.resolve("dangling", mine, "write")).toThrow(/dangling link/);
    // The error never says where the link points: that would describe another agent's tree.
    for (const mode of ["read", "write"] as const) {
      const message = (() => {
        try {
          sandbox.resolve("dangling", mine, mode);
        } catch (error) {
          return (error as Error).message;
        }
        return "";
      })();
      expect(message).toMatch(/dangling/);
      expect(message).not.toMatch(/agent10|nothing-yet/);
    }
    expect(() => sandbox.resolve("x".repeat(5000), mine, "read")).toThrow(
      expect.objectContaining({ code: "INVALID_ARGS" }),
    );
    symlinkSync(join(mine, "loop-b"), join(mine, "loop-a"));
    symlinkSync(join(mine, "loop-a"), join(mine, "loop-b"));
    expect(() => sandbox.resolve("loop-a", mine, "read")).toThrow(/loop/);
  });

  it("follows a link that stays inside the roots (the experience library link)", () => {
    const { mine, sandbox } = setup();
    mkdirSync(join(mine, "library"));
    symlinkSync(join(mine, "library"), join(mine, "团队经验"));
    expect(sandbox.resolve("团队经验/2026-01-01-x.md", mine, "write").realPath).toBe(
      join(mine, "library", "2026-01-01-x.md"),
    );
  });
});

describe("opening a file to read through the sandbox", () => {
  const read = (opened: { fd: number }) => {
    try {
      return readFileSync(opened.fd, "utf8");
    } finally {
      closeSync(opened.fd);
    }
  };
  const codeOf = (work: () => unknown) => {
    try {
      work();
    } catch (error) {
      return (error as ToolError).code;
    }
    return "opened";
  };

  it("follows links inside the roots, refuses those that lead out, and says what is missing", () => {
    const { base, mine, skills, sandbox } = setup();
    writeFileSync(join(mine, "notes.md"), "mine");
    writeFileSync(join(skills, "SKILL.md"), "a skill");
    writeFileSync(join(base, "agent10", "secret.md"), "not mine");
    symlinkSync(join(skills, "SKILL.md"), join(mine, "to-skill"));
    symlinkSync(join(base, "agent10"), join(mine, "to-other"));
    symlinkSync(join(base, "nowhere"), join(mine, "dangling"));
    mkdirSync(join(mine, "folder"));
    execFileSync("mkfifo", [join(base, "agent10", "fifo")]);
    expect(read(openInsideForRead(sandbox, "notes.md", mine))).toBe("mine");
    expect(read(openInsideForRead(sandbox, "to-skill", mine))).toBe("a skill");
    expect(read(openInsideForRead(sandbox, join(skills, "SKILL.md"), mine))).toBe("a skill");
    expect(codeOf(() => openInsideForRead(sandbox, "to-other/secret.md", mine))).toBe("PATH_NOT_ALLOWED");
    expect(codeOf(() => openInsideForRead(sandbox, "../agent10/secret.md", mine))).toBe("PATH_NOT_ALLOWED");
    // A FIFO outside is refused without being opened (an open would wait for a writer).
    expect(codeOf(() => openInsideForRead(sandbox, "to-other/fifo", mine))).toBe("PATH_NOT_ALLOWED");
    expect(codeOf(() => openInsideForRead(sandbox, "dangling", mine))).toBe("PATH_NOT_ALLOWED");
    expect(codeOf(() => openInsideForRead(sandbox, "missing.md", mine))).toBe("PATH_NOT_FOUND");
    expect(codeOf(() => openInsideForRead(sandbox, "folder", mine))).toBe("PATH_IS_DIRECTORY");
    expect(codeOf(() => openInsideForRead(sandbox, "nul\0.md", mine))).toBe("PATH_NOT_ALLOWED");
  });
});
