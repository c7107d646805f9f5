/**
 * Issue 32 item 9, the admin door: an agent plants a 2 GiB sparse document (or a draft's
 * SKILL.md) and waits for an operator to open it. The real admin server and the operator's
 * real toolhost child: the file's size is stated through the toolhost and the read refused
 * before a byte of it travels to the bot's process.
 */
import { closeSync, mkdirSync, openSync, ftruncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AdminServer } from "../../src/admin/admin-server.js";
import { readAgentsFile } from "../../src/config/agents.js";
import { openMaintenancePool } from "../../src/runtime/library-maintenance.js";
import { systemClock } from "../../src/store/clock.js";
import { openStore } from "../../src/store/store.js";
import { pino } from "pino";
import { launchTestAdmin, seedExportReportDraft } from "../helpers/admin.js";
import { CLI_ENTRY, giveToAgent, realWorkspace, type RealWorkspace } from "../helpers/real-toolhost.js";

const TOKEN = "admin-token-for-doc-size-0123456";
const TWO_GIB = 2 * 1024 * 1024 * 1024;
let workspace: RealWorkspace;
let admin: AdminServer;
const logLines: string[] = [];

/** `truncate -s 2G`: st_size says 2 GiB, the disk holds nothing. */
function plantSparse(path: string): void {
  const fd = openSync(path, "w");
  try {
    ftruncateSync(fd, TWO_GIB);
  } finally {
    closeSync(fd);
  }
}

beforeAll(async () => {
  // ADMIN_DOC_MAX_BYTES is left at its default (1 MiB).
  workspace = await realWorkspace({ TOOLHOST_SANDBOX: "none", BOT_LOCALE: "en", ADMIN_TOKEN: TOKEN });
  const library = join(workspace.layout.experienceRoot, "a");
  mkdirSync(library, { recursive: true });
  writeFileSync(join(library, "2026-03-01-small.md"), "---\ntitle: Small\n---\nfits\n");
  plantSparse(join(library, "2026-03-02-huge.md"));
  const draftDir = await seedExportReportDraft(workspace, "a", "body\n");
  plantSparse(join(draftDir, "SKILL.md"));
  giveToAgent(workspace, "a", library, workspace.layout.agentTrees("a").skillsDir);
  admin = await launchTestAdmin(workspace, { secrets: [TOKEN], logLines });
}, 60_000);

afterAll(async () => {
  await admin?.close();
});

async function get(path: string): Promise<{
  status: number;
  json: { ok: boolean; data?: { content?: string }; error?: { code: string; message: string } };
}> {
  const response = await fetch(`${admin.url}${path}`, { headers: { authorization: `Bearer ${TOKEN}` } });
  return { status: response.status, json: (await response.json()) as never };
}

describe("admin API: a document over ADMIN_DOC_MAX_BYTES", () => {
  it("a 2 GiB sparse document is refused with 413 naming its size, the limit and the variable", async () => {
    const result = await get("/v1/agents/a/experience-library/docs/content?file=2026-03-02-huge.md");
    expect(result.status).toBe(413);
    expect(result.json.ok).toBe(false);
    expect(result.json.error?.code).toBe("DOC_TOO_LARGE");
    expect(result.json.error?.message).toContain(String(TWO_GIB));
    expect(result.json.error?.message).toContain("1048576");
    expect(result.json.error?.message).toContain("ADMIN_DOC_MAX_BYTES");
  }, 30_000);

  it("a draft whose SKILL.md is a 2 GiB sparse file is refused the same way", async () => {
    const result = await get("/v1/agents/a/skill-drafts/auto-export-report");
    expect(result.status).toBe(413);
    expect(result.json.error?.code).toBe("DOC_TOO_LARGE");
    expect(result.json.error?.message).toContain(String(TWO_GIB));
  }, 30_000);

  it("a document under the limit still reads, and the listing still lists the large one", async () => {
    expect(await get("/v1/agents/a/experience-library/docs/content?file=2026-03-01-small.md")).toMatchObject({
      status: 200,
      json: { data: { content: "---\ntitle: Small\n---\nfits\n" } },
    });
    const listing = await get("/v1/agents/a/experience-library/docs");
    expect(listing.status).toBe(200);
  }, 30_000);
});

describe("operator.read with maxBytes, in the agent's real toolhost", () => {
  it("refuses a file over maxBytes by the size of the file it opened, before reading it", async () => {
    const store = await openStore(workspace.layout.databaseTarget, systemClock);
    const pool = openMaintenancePool({
      config: workspace.config,
      layout: workspace.layout,
      agents: readAgentsFile(workspace.layout.agentsFile),
      store,
      logger: pino({ level: "silent" }),
      cliEntry: CLI_ENTRY,
      onWarning: () => undefined,
    });
    try {
      const files = pool.agent("a").files;
      const path = join(pool.agent("a").trees.experienceDir, "2026-03-02-huge.md");
      await expect(files.call("operator.read", { path, maxBytes: 1024 * 1024 })).rejects.toMatchObject({
        code: "FILE_TOO_LARGE",
        message: expect.stringContaining(`is ${TWO_GIB} bytes; the limit is 1048576`),
      });
      const small = JSON.parse(
        await files.call("operator.read", {
          path: join(pool.agent("a").trees.experienceDir, "2026-03-01-small.md"),
          maxBytes: 1024 * 1024,
        }),
      ) as { base64: string };
      expect(Buffer.from(small.base64, "base64").toString("utf8")).toBe("---\ntitle: Small\n---\nfits\n");
    } finally {
      await pool.close();
      await store.close();
    }
  }, 30_000);
});
