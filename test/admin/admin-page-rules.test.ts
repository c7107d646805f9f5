/**
 * The admin page's Rules view and the gaps view's Environment section, in Debian's
 * headless Chromium (playwright-core) against the real admin server on 127.0.0.1:0 with a
 * real workspace and real SQLite: rule candidates from an active distilled skill and a
 * well-evidenced lesson, environment gaps recorded as the gap recorder records outages.
 * Screenshots land in test-output/admin-page/.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AdminServer } from "../../src/admin/admin-server.js";
import { systemClock } from "../../src/store/clock.js";
import { openStore } from "../../src/store/store.js";
import { launchTestAdmin, seedLessons, type SeededLessons } from "../helpers/admin.js";
import { SKILL_HEURISTICS, seedSkillHeuristics } from "../helpers/admin-rules.js";
import { realWorkspace, type RealWorkspace } from "../helpers/real-toolhost.js";
import { REAL_REPO_ROOT, tempDir } from "../helpers/temp-dir.js";

const CHROMIUM = "/usr/bin/chromium";
const hasChromium = existsSync(CHROMIUM);
const TOKEN = "admin-page-rules-token-0123456789";
const SHOTS = join(REAL_REPO_ROOT, "test-output", "admin-page");
let workspace: RealWorkspace;
let admin: AdminServer;
let browser: BrowserContext;
let page: Page;
let lessons: SeededLessons;
const logLines: string[] = [];
const shot = (name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
const statusText = () => page.locator("#status").textContent();
const candidateRow = (id: string) => page.locator(`table.candidates tr[data-candidate="${id}"]`);
const candidate = (index: number) => `deploy-gateway@v1#${index}`;

/** Whether some page script is newer than its compiled file (or was never compiled). */
function pageIsStale(): boolean {
  const sourceDir = join(REAL_REPO_ROOT, "src/admin/page");
  const compiledDir = join(REAL_REPO_ROOT, "dist/admin-page");
  return readdirSync(sourceDir)
    .filter((name) => name.endsWith(".ts"))
    .some((name) => {
      const compiled = join(compiledDir, name.replace(/\.ts$/, ".js"));
      return !existsSync(compiled) || statSync(compiled).mtimeMs < statSync(join(sourceDir, name)).mtimeMs;
    });
}

/** Outages as the gap recorder keeps them: keyed by their cause, the user's words only in the raw key. */
async function seedOutages(): Promise<void> {
  const store = await openStore(workspace.layout.databaseTarget, systemClock);
  try {
    const outage = (index: number, words: string, cause: string, reason: string, errorCode: string, detail: string) =>
      store.gaps.record({
        agentId: "a",
        traceId: `outage-${index}`,
        rawIntentKey: words,
        intentKey: cause,
        reason,
        gapClass: "environment",
        errorCode,
        detail,
        userText: words,
      });
    await outage(1, "hi", "model-rate-limited", "model_failure", "rate_limit", "HTTP 429 from the model");
    await outage(2, "hello there", "model-rate-limited", "model_failure", "rate_limit", "HTTP 429 from the model");
    await outage(3, "slow", "tool-timeout", "tool_failure", "TIMEOUT", "shell.exec timed out after 30s");
    await outage(4, "deploy now", "model-rate-limited", "model_failure", "rate_limit", "HTTP 429: slow down");
  } finally {
    await store.close();
  }
}

describe.skipIf(!hasChromium)("admin page: rules and environment gaps in headless Chromium", () => {
  beforeAll(async () => {
    if (pageIsStale())
      execFileSync(join(REAL_REPO_ROOT, "node_modules/.bin/tsc"), ["-p", join(REAL_REPO_ROOT, "src/admin/page")], {
        stdio: "inherit",
      });
    mkdirSync(SHOTS, { recursive: true });
    workspace = await realWorkspace({ TOOLHOST_SANDBOX: "none", BOT_LOCALE: "en", ADMIN_TOKEN: TOKEN });
    lessons = await seedLessons(workspace, "a");
    await seedSkillHeuristics(workspace, "a");
    await seedOutages();
    admin = await launchTestAdmin(workspace, { secrets: [TOKEN], logLines });
    browser = await chromium.launchPersistentContext(tempDir("laoding-chromium-", "file"), {
      executablePath: CHROMIUM,
      headless: true,
      viewport: { width: 1280, height: 900 },
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"],
    });
    page = browser.pages()[0] ?? (await browser.newPage());
    page.setDefaultTimeout(15_000);
    await page.goto(`${admin.url}/`);
    await page.fill("#token", TOKEN);
    await page.keyboard.press("Enter");
    await page.locator("tr[data-agent=a]").waitFor();
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await admin?.close();
  });

  it("lists the candidates with their evidence and the limits; accepts one as it is and one in shorter words", async () => {
    await page.click("tr[data-agent=a] >> text=Rules");
    await candidateRow(candidate(1)).waitFor();
    expect(await page.locator("#rules-limits").textContent()).toContain("At most 5 active rules, 300 characters each");
    expect(await page.locator("#rules-count").textContent()).toBe("Active rules (0 of 5)");
    expect(await page.locator(".rules-none").textContent()).toBe("No rules yet.");
    const ids = await page
      .locator("table.candidates tbody tr")
      .evaluateAll((rows) => rows.map((row) => row.getAttribute("data-candidate")));
    expect(ids).toEqual(expect.arrayContaining([...[1, 2, 3, 4, 5].map(candidate), lessons.deploy]));
    expect(ids).not.toContain(candidate(6));
    expect(await candidateRow(candidate(1)).locator("td.evidence").textContent()).toContain(
      "heuristic of active skill deploy-gateway v1",
    );
    expect(await candidateRow(lessons.deploy).locator("td.evidence").textContent()).toMatch(
      /shown to \d+ tasks, \d+ succeeded/,
    );
    await shot("rules");

    await candidateRow(candidate(1)).locator("button[data-accept]").click();
    await expect.poll(() => statusText()).toContain(`accepted: ${SKILL_HEURISTICS[0]}`);
    await page.locator("table.rules tbody tr").first().waitFor();
    expect(await page.locator("#rules-count").textContent()).toBe("Active rules (1 of 5)");
    expect(await candidateRow(candidate(1)).count()).toBe(0);

    await candidateRow(candidate(2)).locator("textarea").fill("Check gateway health first.");
    await expect.poll(() => candidateRow(candidate(2)).locator(".counter").textContent()).toBe("27 / 300 characters");
    await candidateRow(candidate(2)).locator("button[data-accept]").click();
    await expect.poll(() => statusText()).toContain("accepted: Check gateway health first.");
    const store = await openStore(workspace.layout.databaseTarget, systemClock);
    try {
      const rules = await store.rules.active("a");
      expect(rules.map((rule) => [rule.text, rule.source])).toEqual([
        [SKILL_HEURISTICS[0], candidate(1)],
        ["Check gateway health first.", candidate(2)],
      ]);
      const ledger = await store.ledger.bySubject("rule", String(rules[1]?.id));
      expect(ledger.map((row) => [row.action, row.actor])).toEqual([["accept", "admin"]]);
    } finally {
      await store.close();
    }
    expect(await page.locator("table.rules tr td.rule-text").allTextContents()).toEqual([
      SKILL_HEURISTICS[0],
      "Check gateway health first.",
    ]);
  }, 30_000);

  it("shows the server's refusal of a wording over 300 characters; at 5 rules Accept is off; Remove asks first", async () => {
    const row = candidateRow(candidate(3));
    await row.locator("textarea").fill("x".repeat(301));
    expect(await row.locator(".counter").getAttribute("class")).toContain("error");
    await row.locator("button[data-accept]").click();
    await expect.poll(() => statusText()).toContain("this one has 301");
    expect(await statusText()).toContain("INVALID_BODY");
    expect(await page.locator("#status").getAttribute("role")).toBe("alert");
    expect(await page.locator("table.rules tbody tr").count()).toBe(2);

    await row.locator("textarea").fill("");
    for (const index of [3, 4, 5]) {
      await candidateRow(candidate(index)).locator("button[data-accept]").click();
      await expect.poll(() => page.locator("table.rules tbody tr").count()).toBe(index);
    }
    expect(await page.locator("#rules-count").textContent()).toBe("Active rules (5 of 5)");
    expect(await page.locator("#rules-full").textContent()).toContain("has 5 rules already");
    expect(await candidateRow(lessons.deploy).locator("button[data-accept]").isDisabled()).toBe(true);
    await shot("rules-full");

    const first = page.locator("table.rules tbody tr").first();
    const ruleId = await first.getAttribute("data-rule");
    page.once("dialog", (dialog) => void dialog.dismiss());
    await first.locator("button[data-remove]").click();
    expect(await page.locator("table.rules tbody tr").count()).toBe(5);
    page.once("dialog", (dialog) => {
      expect(dialog.message()).toContain(SKILL_HEURISTICS[0]);
      void dialog.accept();
    });
    await first.locator("button[data-remove]").click();
    await expect.poll(() => statusText()).toContain(`Removed rule ${ruleId}.`);
    await expect.poll(() => page.locator("table.rules tbody tr").count()).toBe(4);
    // The candidate it came from is offered again, and there is room for it.
    expect(await candidateRow(candidate(1)).locator("button[data-accept]").isDisabled()).toBe(false);
    expect(await page.locator("#rules-full").count()).toBe(0);
    await page.setViewportSize({ width: 375, height: 800 });
    await shot("rules-375px");
    expect(await page.evaluate<number>("document.documentElement.scrollWidth - window.innerWidth")).toBeLessThanOrEqual(
      0,
    );
    await page.setViewportSize({ width: 1280, height: 900 });
  }, 30_000);

  it("shows environment failures by cause apart from capability gaps, in words, with counts and last seen", async () => {
    await page.click("nav >> text=Capability gaps");
    const rows = page.locator("table.environment tbody tr");
    await rows.first().waitFor();
    expect(await rows.evaluateAll((found) => found.map((row) => row.getAttribute("data-cause")))).toEqual([
      "model-rate-limited",
      "tool-timeout",
    ]);
    const limited = page.locator("table.environment tr[data-cause=model-rate-limited]");
    expect(await limited.locator("strong.cause").textContent()).toBe("Model rate limited");
    expect(await limited.locator("td.num").textContent()).toBe("3");
    expect(await limited.locator("td.detail").textContent()).toBe("HTTP 429: slow down");
    expect((await limited.locator("td").nth(3).textContent())?.length).toBeGreaterThan(0);
    expect(await page.locator("table.environment tr[data-cause=tool-timeout] strong.cause").textContent()).toBe(
      "Tool timed out",
    );
    // The outages are not capability gaps, and the user's words are not shown for them.
    expect(await page.locator("table.gaps").count()).toBe(0);
    expect(await page.locator("main").textContent()).not.toContain("hello there");
    // A cause the page has no words for is shown as it is.
    expect(await page.evaluate<string>("import('/assets/view-gaps.js').then((m) => m.causeWords('disk-full'))")).toBe(
      "disk-full",
    );
    await shot("gaps-environment");
  });

  it("tolerates a gap report without `environment` (an older server): no section, no error", async () => {
    await page.route("**/capability-gaps*", async (route) => {
      const response = await route.fetch();
      const body = (await response.json()) as { data: Record<string, unknown> };
      delete body.data.environment;
      await route.fulfill({ response, json: body });
    });
    try {
      await page.fill("#gap-window", "48");
      await page.press("#gap-window", "Enter");
      await expect.poll(() => page.locator("#gap-window").inputValue()).toBe("48");
      await page.locator("main h1").waitFor();
      await expect.poll(() => page.locator("#environment").count()).toBe(0);
      expect(await page.locator("main .error").count()).toBe(0);
    } finally {
      await page.unroute("**/capability-gaps*");
    }
  });

  it("shows each lesson's uses and successes from the effect report in the Lessons view", async () => {
    await page.click("nav >> text=Lessons");
    const uses = page.locator(`table.lessons tr[data-lesson=${lessons.deploy}] td.uses`);
    await uses.waitFor();
    // 20 tasks the lesson was shown to, 18 of them succeeded; its holdout is far lower.
    expect(await uses.textContent()).toMatch(/^20 · 18 \(90%; holdout \d+%\)$/);
  });

  it("speaks Chinese: the Rules view and the environment section", async () => {
    await page.selectOption("#locale", "zh");
    await page.click("nav >> text=能力缺口");
    await page.locator("#environment").waitFor();
    expect(await page.locator("#environment").textContent()).toBe("环境");
    expect(await page.locator("table.environment tr[data-cause=model-rate-limited] strong.cause").textContent()).toBe(
      "模型被限流",
    );
    await page.click("nav >> text=规则");
    await page.locator("table.rules").waitFor();
    expect(await page.locator("#rules-count").textContent()).toBe("生效规则(4 / 5)");
    expect(await page.locator("#rules-limits").textContent()).toContain("最多 5 条生效规则");
    expect(await candidateRow(candidate(1)).locator("button[data-accept]").textContent()).toBe("采纳");
    await shot("rules-zh");
    await page.selectOption("#locale", "en");
  });
});
