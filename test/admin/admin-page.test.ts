/**
 * The admin page driven in Debian's headless Chromium (playwright-core, never a downloaded
 * browser) against the real admin server on 127.0.0.1:0 with a real workspace: real SQLite,
 * real toolhost children doing every file operation. One browser and one page for the file.
 * Screenshots land in test-output/admin-page/.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AdminServer } from "../../src/admin/admin-server.js";
import { systemClock } from "../../src/store/clock.js";
import { openStore } from "../../src/store/store.js";
import { seedExportReportDraft, launchTestAdmin, seedLessons, type SeededLessons } from "../helpers/admin.js";
import { giveToAgent, realWorkspace, type RealWorkspace } from "../helpers/real-toolhost.js";
import { REAL_REPO_ROOT, tempDir } from "../helpers/temp-dir.js";

const CHROMIUM = "/usr/bin/chromium";
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium)
  console.warn(
    `admin page browser tests skipped: ${CHROMIUM} is missing (apt-get install chromium; .ci/run installs it)`,
  );

const TOKEN = "admin-page-token-for-tests-0123456789";
const SHOTS = join(REAL_REPO_ROOT, "test-output", "admin-page");
let workspace: RealWorkspace;
let admin: AdminServer;
let browser: BrowserContext;
let page: Page;
let lessons: SeededLessons;
const logLines: string[] = [];
const library = (agent: string) => join(workspace.layout.experienceRoot, agent);
const indexOf = (agent: string) => readFileSync(join(library(agent), "INDEX.md"), "utf8");
const shot = (name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
const statusText = () => page.locator("#status").textContent();

async function agentsFromApi(): Promise<Array<{ id: string; libraryEnabled: boolean }>> {
  const response = await fetch(`${admin.url}/v1/agents`, { headers: { authorization: `Bearer ${TOKEN}` } });
  return ((await response.json()) as { data: Array<{ id: string; libraryEnabled: boolean }> }).data;
}

describe.skipIf(!hasChromium)("admin page in headless Chromium", () => {
  beforeAll(async () => {
    // The page's scripts are served from dist/admin-page, which `npm install` builds; build them now so the test sees this source.
    execFileSync(join(REAL_REPO_ROOT, "node_modules/.bin/tsc"), ["-p", join(REAL_REPO_ROOT, "src/admin/page")], {
      stdio: "inherit",
    });
    mkdirSync(SHOTS, { recursive: true });
    workspace = await realWorkspace({ TOOLHOST_SANDBOX: "none", BOT_LOCALE: "en", ADMIN_TOKEN: TOKEN });
    mkdirSync(library("a"), { recursive: true });
    writeFileSync(
      join(library("a"), "2026-03-01-deploy-notes.md"),
      "---\ntitle: Deploy notes\nkeywords: deploy, ssh\nsummary: How we deploy\nlast_verified: 2026-03-02\n---\nUse the script.\n",
    );
    await seedExportReportDraft(workspace, "a", "Export the weekly report.\n");
    giveToAgent(workspace, "a", library("a"), workspace.layout.agentTrees("a").skillsDir);
    lessons = await seedLessons(workspace, "a");
    // Agent b has one cluster nobody drafted for yet: an open one.
    const store = await openStore(workspace.layout.databaseTarget, systemClock);
    await store.gaps.record({
      agentId: "b",
      traceId: "tb",
      intentKey: "translate_pdf",
      reason: "no_skill",
      gapClass: "capability",
      userText: "translate this pdf",
    });
    await store.close();
    admin = await launchTestAdmin(workspace, { secrets: [], logLines });
    // A fresh profile for every run: nothing carried over between runs or from a person's browser.
    browser = await chromium.launchPersistentContext(tempDir("laoding-chromium-", "file"), {
      executablePath: CHROMIUM,
      headless: true,
      viewport: { width: 1280, height: 900 },
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    });
    page = browser.pages()[0] ?? (await browser.newPage());
    page.setDefaultTimeout(15_000);
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await admin?.close();
  });

  it("serves the page and its assets without a token, with a strict content policy; the API still needs one", async () => {
    const html = await fetch(`${admin.url}/`);
    expect(html.status).toBe(200);
    expect(html.headers.get("content-type")).toContain("text/html");
    expect(html.headers.get("content-security-policy")).toContain("script-src 'self'");
    expect(await html.text()).toContain('data-default-locale="en"');
    expect((await fetch(`${admin.url}/assets/app.js`)).headers.get("content-type")).toContain("text/javascript");
    expect((await fetch(`${admin.url}/assets/../package.json`)).status).toBe(401);
    expect((await fetch(`${admin.url}/v1/agents`)).status).toBe(401);
  });

  it("a wrong token says so and is not kept; the right one signs in and stays out of the URL", async () => {
    await page.goto(`${admin.url}/`);
    await page.fill("#token", "not-the-admin-token-at-all");
    await page.click("form.sign-in button[type=submit]");
    await expect.poll(() => page.locator("#sign-in-error").textContent()).toContain("Wrong token");
    expect(await page.evaluate<number>("sessionStorage.length")).toBe(0);
    await shot("wrong-token");
    await page.fill("#token", TOKEN);
    await page.keyboard.press("Enter");
    await page.locator("tr[data-agent=a]").waitFor();
    const cells = (agent: string) => page.locator(`tr[data-agent=${agent}] td.num`).allTextContents();
    // documents, gaps in the window, open clusters, drafts waiting
    expect(await cells("a")).toEqual(["1", "3", "0", "1"]);
    expect(await cells("b")).toEqual(["0", "1", "1", "0"]);
    expect(await page.locator("tr[data-agent=a] td.lesson-counts").textContent()).toBe(
      "1 draft · 1 active · 1 deprecated",
    );
    expect(await page.locator("tr[data-agent=b] td.lesson-counts").textContent()).toBe(
      "0 draft · 0 active · 0 deprecated",
    );
    expect(page.url()).not.toContain(TOKEN);
    expect(await page.evaluate<string | null>('sessionStorage.getItem("laoding-admin-token")')).toBe(TOKEN);
    expect(logLines.join("\n")).not.toContain(TOKEN);
  }, 30_000);

  it("flips an agent's library switch at once and shows the result", async () => {
    const toggle = page.locator("button[role=switch][data-agent=a]");
    expect(await toggle.getAttribute("aria-checked")).toBe("true");
    await toggle.click();
    await expect.poll(() => toggle.getAttribute("aria-checked")).toBe("false");
    expect(await statusText()).toContain("switched off");
    expect((await agentsFromApi()).find((agent) => agent.id === "a")?.libraryEnabled).toBe(false);
    await shot("agents-switched-off");
    await toggle.focus();
    await page.keyboard.press("Enter");
    await expect.poll(() => toggle.getAttribute("aria-checked")).toBe("true");
    expect((await agentsFromApi()).find((agent) => agent.id === "a")?.libraryEnabled).toBe(true);
  });

  it("creates, searches (zh and en), edits with an unsaved-edit guard, and deletes a document; INDEX.md follows on disk", async () => {
    await page.click("tr[data-agent=a] >> text=Library");
    await page.locator("tr[data-file='2026-03-01-deploy-notes.md']").waitFor();
    await page.click("text=New document");
    await page.fill("#field-fileName", "2026-04-01-先备份.md");
    await page.fill("#field-title", "先备份再升级");
    await page.fill("#field-keywords", "备份, upgrade");
    await page.fill("#field-summary", "升级前先备份数据库");
    await page.fill("#field-body", "先运行 backup.sh。");
    await page.click("form.editor button[type=submit]");
    await page.locator("tr[data-file='2026-04-01-先备份.md']").waitFor();
    expect(await statusText()).toContain("Saved 2026-04-01-先备份.md");
    const written = readFileSync(join(library("a"), "2026-04-01-先备份.md"), "utf8");
    expect(written).toContain("title: 先备份再升级\nkeywords: 备份, upgrade\nsummary: 升级前先备份数据库");
    expect(written).toContain("---\n先运行 backup.sh。\n");
    expect(indexOf("a")).toContain("2026-04-01-先备份.md | 先备份再升级 | 备份,upgrade | 升级前先备份数据库");

    // Creating over an existing name is refused, and the existing document is left alone.
    const before = readFileSync(join(library("a"), "2026-03-01-deploy-notes.md"), "utf8");
    await page.click("text=New document");
    await page.fill("#field-fileName", "2026-03-01-deploy-notes.md");
    await page.fill("#field-title", "Overwrite?");
    await page.click("form.editor button[type=submit]");
    await expect.poll(() => statusText()).toContain("already exists");
    expect(await page.locator("#status").getAttribute("role")).toBe("alert");
    expect(readFileSync(join(library("a"), "2026-03-01-deploy-notes.md"), "utf8")).toBe(before);
    page.once("dialog", (dialog) => void dialog.accept());
    await page.click("nav >> text=Library");
    await page.locator("#doc-search").waitFor();

    await page.fill("#doc-search", "备份");
    await expect.poll(() => page.locator("table.docs tbody tr").count()).toBe(1);
    expect(await page.locator("table.docs tbody tr").getAttribute("data-file")).toBe("2026-04-01-先备份.md");
    await page.fill("#doc-search", "DEPLOY");
    await expect.poll(() => page.locator("table.docs tbody tr").count()).toBe(1);
    expect(await page.locator("table.docs tbody tr").getAttribute("data-file")).toBe("2026-03-01-deploy-notes.md");
    await shot("library-search");

    await page.click("tr[data-file='2026-03-01-deploy-notes.md'] >> text=Open");
    await page.locator("#field-summary").waitFor();
    expect(await page.inputValue("#field-title")).toBe("Deploy notes");
    expect(await page.inputValue("#field-body")).toBe("Use the script.\n");
    await page.fill("#field-summary", "How we deploy, checked");
    // An accidental click elsewhere asks first; dismissing keeps the edit.
    page.once("dialog", (dialog) => void dialog.dismiss());
    await page.click("nav >> text=Agents");
    await expect.poll(() => page.evaluate<string>("location.hash")).toContain("/edit/");
    expect(await page.inputValue("#field-summary")).toBe("How we deploy, checked");
    // A reload or closing the tab asks too (the page cancels beforeunload while edits are unsaved).
    const unloadBlocked =
      "(() => { const event = new Event('beforeunload', { cancelable: true }); window.dispatchEvent(event); return event.defaultPrevented; })()";
    expect(await page.evaluate<boolean>(unloadBlocked)).toBe(true);
    await page.click("form.editor button[type=submit]");
    await page.locator("#doc-search").waitFor();
    expect(await page.evaluate<boolean>(unloadBlocked)).toBe(false);
    expect(indexOf("a")).toContain("| How we deploy, checked |");

    page.once("dialog", (dialog) => void dialog.accept());
    await page.click("tr[data-file='2026-04-01-先备份.md'] button.danger");
    await page.locator("tr[data-file='2026-04-01-先备份.md']").waitFor({ state: "detached" });
    expect(await statusText()).toContain("Deleted 2026-04-01-先备份.md");
    expect(existsSync(join(library("a"), "2026-04-01-先备份.md"))).toBe(false);
    expect(indexOf("a")).not.toContain("先备份");

    await page.click("#rebuild-index");
    await expect.poll(() => statusText()).toContain("Index rebuilt: 1 documents");
    await page.setViewportSize({ width: 375, height: 800 });
    await shot("library-375px");
    const overflow = await page.evaluate<number>("document.documentElement.scrollWidth - window.innerWidth");
    expect(overflow).toBeLessThanOrEqual(0);
    await page.setViewportSize({ width: 1280, height: 900 });
  }, 60_000);

  it("shows gap clusters with their draft, opens its SKILL.md and retires it", async () => {
    await page.click("nav >> text=Capability gaps");
    const row = page.locator("table.gaps tr[data-intent=export_report]");
    await row.waitFor();
    expect(await row.textContent()).toContain("export the report 0");
    expect(await row.locator("td.num").first().textContent()).toBe("3");
    await row.locator("button[data-draft=auto-export-report]").click();
    await expect.poll(() => page.locator(".draft-viewer pre").textContent()).toContain("Export the weekly report.");
    await shot("gaps-draft-open");
    page.once("dialog", (dialog) => void dialog.accept());
    await row.locator("button[data-retire=auto-export-report]").click();
    await expect.poll(() => statusText()).toContain("Retired auto-export-report");
    expect(existsSync(join(workspace.layout.agentTrees("a").skillsDir, "auto-export-report"))).toBe(false);
    expect(
      readdirSync(join(workspace.layout.agentTrees("a").privateDir, "archive", "skills")).some((name) =>
        name.endsWith("auto-export-report"),
      ),
    ).toBe(true);
    await expect.poll(() => page.locator("button[data-retire]").count()).toBe(0);
    // The window is the operator's to choose; the server's answer says which one it used.
    await page.fill("#gap-window", "2");
    const [answer] = await Promise.all([
      page.waitForResponse((response) => response.url().includes("/capability-gaps?sinceHours=2")),
      page.press("#gap-window", "Enter"),
    ]);
    expect(((await answer.json()) as { data: { sinceHours: number } }).data.sinceHours).toBe(2);
    await page.locator("table.gaps tr[data-intent=export_report]").waitFor();
  }, 30_000);

  it("lists lessons by status, shows a lesson's history, pins, deprecates with a reason, restores, and charts the effect report", async () => {
    await page.click("nav >> text=Lessons");
    const rows = page.locator("table.lessons tbody tr");
    const row = (id: string) => page.locator(`table.lessons tr[data-lesson=${id}]`);
    await row(lessons.deploy).waitFor();
    expect(await rows.count()).toBe(3);
    await page.click("a[data-status=draft]");
    await expect
      .poll(() => rows.evaluateAll((found) => found.map((element) => element.getAttribute("data-lesson"))))
      .toEqual([lessons.backup]);
    await page.click("a[data-status=all]");
    await expect.poll(() => rows.count()).toBe(3);

    // The history comes from the ledger: created by the distiller, deprecated by an operator with a reason.
    await row(lessons.stale).locator("button[data-action=history]").click();
    const history = page.locator(".ledger-viewer tbody tr");
    await expect
      .poll(() => history.evaluateAll((found) => found.map((element) => element.getAttribute("data-action"))))
      .toEqual(["create", "deprecate"]);
    expect(await history.nth(1).textContent()).toContain("the cache reloads itself now");

    const store = await openStore(workspace.layout.databaseTarget, systemClock);
    const lessonRow = (id: string) => store.experiences.get(Number(id.slice(4)));
    try {
      await row(lessons.deploy).locator("button[data-action=pin]").click();
      await expect.poll(() => statusText()).toContain(`Pinned ${lessons.deploy}`);
      expect((await lessonRow(lessons.deploy))?.pinned).toBe(1);
      await row(lessons.deploy).locator("button[data-action=unpin]").waitFor();
      // Keyboard users land on the button that undoes what they did.
      expect(await page.evaluate<string | null>("document.activeElement?.getAttribute('data-action') ?? null")).toBe(
        "unpin",
      );
      expect(await row(lessons.deploy).locator(".badge.pinned").count()).toBe(1);

      // Deprecate asks for a reason; an empty one is refused and changes nothing.
      page.once("dialog", (dialog) => void dialog.accept("   "));
      await row(lessons.backup).locator("button[data-action=deprecate]").click();
      await expect.poll(() => statusText()).toContain("a reason is needed");
      expect((await lessonRow(lessons.backup))?.status).toBe("draft");
      page.once("dialog", (dialog) => {
        expect(dialog.type()).toBe("prompt");
        void dialog.accept("only true for the old backup host");
      });
      await row(lessons.backup).locator("button[data-action=deprecate]").click();
      await expect.poll(() => statusText()).toContain(`Deprecated ${lessons.backup}`);
      expect(await lessonRow(lessons.backup)).toMatchObject({
        status: "deprecated",
        deprecatedReason: "only true for the old backup host",
      });
      expect((await store.ledger.bySubject("experience", lessons.backup)).at(-1)).toMatchObject({
        action: "deprecate",
        actor: "operator",
        reason: "only true for the old backup host",
      });
      expect(await row(lessons.backup).getAttribute("data-status")).toBe("deprecated");

      await row(lessons.stale).locator("button[data-action=restore]").click();
      await expect.poll(() => statusText()).toContain(`Restored ${lessons.stale} as a draft`);
      expect((await lessonRow(lessons.stale))?.status).toBe("draft");
    } finally {
      await store.close();
    }
    const fromApi = await fetch(`${admin.url}/v1/agents/a/experiences?status=deprecated`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(((await fromApi.json()) as { data: { id: string }[] }).data.map((lesson) => lesson.id)).toEqual([
      lessons.backup,
    ]);

    // The chart: the deploy tag has enough tasks for an interval, the backup tag does not.
    const deploy = page.locator("svg.effect-chart g[data-row=deploy]");
    expect(await deploy.getAttribute("data-verdict")).toBe("helps");
    expect(await deploy.locator("circle.effect").count()).toBe(1);
    expect(await deploy.textContent()).toContain("90% n=20");
    expect(await deploy.textContent()).toContain("30% n=10");
    expect(await deploy.textContent()).toContain("+60 [");
    const backup = page.locator("svg.effect-chart g[data-row=backup]");
    expect(await backup.locator("text.insufficient").textContent()).toBe("insufficient data");
    expect(await backup.locator("circle.effect").count()).toBe(0);
    // Each bar's whisker is its rate's Wilson 95% interval: 18/20 → 69.9%…97.2% of the 200-unit axis starting at x=140.
    const whisker = deploy.locator("line.whisker").first();
    expect(Number(await whisker.getAttribute("x1"))).toBeCloseTo(140 + 0.699 * 200, 0);
    expect(Number(await whisker.getAttribute("x2"))).toBeCloseTo(140 + 0.9721 * 200, 0);
    expect(await deploy.locator("line.whisker").count()).toBe(2);
    expect(await row(lessons.deploy).locator("td").nth(6).textContent()).toBe("20 · 20 · 1 · 0");
    expect(Number(await deploy.locator("rect.bar.treatment").getAttribute("width"))).toBeGreaterThan(
      Number(await deploy.locator("rect.bar.holdout").getAttribute("width")),
    );
    await shot("lessons");
    await page.setViewportSize({ width: 375, height: 800 });
    await shot("lessons-375px");
    expect(await page.evaluate<number>("document.documentElement.scrollWidth - window.innerWidth")).toBeLessThanOrEqual(
      0,
    );
    await page.setViewportSize({ width: 1280, height: 900 });
  }, 30_000);

  it("switches to Chinese (the lessons view too), and signing out forgets the token", async () => {
    await page.selectOption("#locale", "zh");
    await expect.poll(() => page.locator("#sign-out").textContent()).toBe("退出");
    await shot("gaps-zh");
    await page.click("nav >> text=经验教训");
    await expect
      .poll(() => page.locator("svg.effect-chart g[data-row=backup] text.insufficient").textContent())
      .toBe("数据不足");
    expect(await page.locator("a[data-status=deprecated]").textContent()).toBe("已弃用 (1)");
    await shot("lessons-zh");
    await page.click("#sign-out");
    await page.locator("#token").waitFor();
    expect(await page.evaluate<string | null>('sessionStorage.getItem("laoding-admin-token")')).toBeNull();
    expect(await page.locator("#sign-in-title").textContent()).toBe("登录");
    await page.selectOption("#locale", "en");
  });
});
