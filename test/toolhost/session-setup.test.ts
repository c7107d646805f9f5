/**
 * Session folder preparation on the real filesystem: the library link is created once,
 * re-pointed, removed when the library is off (only ever a link), excluded from git once,
 * and deleting a session folder never touches the library.
 */
import { execFileSync } from "node:child_process";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readlinkSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { createSessionSetup } from "../../src/toolhost/server/session-setup.js";
import { tempDir } from "../helpers/temp-dir.js";

const logger = pino({ level: "silent" });
const LINK = "团队经验";

function setup() {
  const root = tempDir("laoding-session-");
  const library = join(root, "share", "agent-experience", "a");
  const folder = join(root, "workspace", "a", "chat-1");
  mkdirSync(library, { recursive: true });
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(library, "2026-10-24-mysql-deadlock.md"), "---\ntitle: 死锁\n---\nbody\n");
  return { root, library, folder, link: join(folder, LINK) };
}

describe("session folder setup", () => {
  it("creates the link idempotently and indexes the library once", () => {
    const { library, folder, link } = setup();
    const prepare = createSessionSetup({
      link: { name: LINK, target: library },
      library: { dir: library, locale: "zh" },
      logger,
    });
    prepare(folder);
    prepare(folder);
    expect(readlinkSync(link)).toBe(library);
    expect(readFileSync(join(library, "INDEX.md"), "utf8")).toContain("- 2026-10-24-mysql-deadlock.md | 死锁 |");
    expect(readdirSync(folder)).toEqual([LINK]);
  });

  it("puts a removed link back the next time the folder is prepared", () => {
    const { library, folder, link } = setup();
    const prepare = createSessionSetup({ link: { name: LINK, target: library }, logger });
    prepare(folder);
    rmSync(link);
    expect(existsSync(link)).toBe(false);
    prepare(folder);
    expect(readlinkSync(link)).toBe(library);
  });

  it("re-points a link that points elsewhere, and leaves a real file or folder of that name alone", () => {
    const { root, library, folder, link } = setup();
    symlinkSync(join(root, "elsewhere"), link);
    const prepare = createSessionSetup({ link: { name: LINK, target: library }, logger });
    prepare(folder);
    expect(readlinkSync(link)).toBe(library);
    expect(readdirSync(folder)).toEqual([LINK]);

    const other = join(root, "workspace", "a", "chat-2");
    mkdirSync(join(other, LINK), { recursive: true });
    writeFileSync(join(other, LINK, "mine.txt"), "the agent's own folder");
    prepare(other);
    expect(lstatSync(join(other, LINK)).isDirectory()).toBe(true);
    expect(readFileSync(join(other, LINK, "mine.txt"), "utf8")).toBe("the agent's own folder");
  });

  it("removes the link when the library is off; never a real folder", () => {
    const { library, folder, link } = setup();
    createSessionSetup({ link: { name: LINK, target: library }, logger })(folder);
    createSessionSetup({ link: { name: LINK }, logger })(folder);
    expect(existsSync(link)).toBe(false);
    expect(readdirSync(library)).toContain("2026-10-24-mysql-deadlock.md");
    mkdirSync(link);
    createSessionSetup({ link: { name: LINK }, logger })(folder);
    expect(lstatSync(link).isDirectory()).toBe(true);
  });

  it("a git checkout gets the link name in .git/info/exclude once", () => {
    const { library, folder } = setup();
    execFileSync("git", ["init", "-q", folder]);
    writeFileSync(
      join(folder, ".git", "info", "exclude"),
      "# git ls-files --others --exclude-from=.git/info/exclude\n*.log",
    );
    const prepare = createSessionSetup({ link: { name: LINK, target: library }, logger });
    prepare(folder);
    prepare(folder);
    createSessionSetup({ link: { name: LINK, target: library }, logger })(folder);
    expect(readFileSync(join(folder, ".git", "info", "exclude"), "utf8")).toBe(
      `# git ls-files --others --exclude-from=.git/info/exclude\n*.log\n/${LINK}\n`,
    );
    expect(execFileSync("git", ["-C", folder, "status", "--porcelain"], { encoding: "utf8" })).toBe("");
  });

  it("deleting a session folder keeps the library's contents", () => {
    const { library, folder } = setup();
    createSessionSetup({ link: { name: LINK, target: library }, library: { dir: library, locale: "zh" }, logger })(
      folder,
    );
    const before = readdirSync(library).sort();
    execFileSync("rm", ["-rf", join(folder, "..")]);
    expect(readdirSync(library).sort()).toEqual(before);
    expect(readFileSync(join(library, "2026-10-24-mysql-deadlock.md"), "utf8")).toContain("body");
  });
});
