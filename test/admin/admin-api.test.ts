/**
 * The admin API for real: the server on 127.0.0.1:0, a seeded workspace with agents a and
 * b, real SQLite, and the operator's real toolhost children doing every file operation.
 */
import { lstatSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AdminServer } from "../../src/admin/admin-server.js";
import { systemClock } from "../../src/store/clock.js";
import { openStore } from "../../src/store/store.js";
import { effectReport } from "../../src/agent/distillation/effect-report.js";
import { seedExportReportDraft, launchTestAdmin, seedLessons, type SeededLessons } from "../helpers/admin.js";
import { giveToAgent, realWorkspace, type RealWorkspace } from "../helpers/real-toolhost.js";

const TOKEN = "admin-token-for-tests-0123456789";
let workspace: RealWorkspace;
let admin: AdminServer;
let lessons: SeededLessons;
const logLines: string[] = [];
const library = (agent: string) => join(workspace.layout.experienceRoot, agent);

beforeAll(async () => {
  workspace = await realWorkspace({
    TOOLHOST_SANDBOX: "none",
    BOT_LOCALE: "en",
    ADMIN_TOKEN: TOKEN,
    ADMIN_BODY_MAX_BYTES: "4096",
  });
  mkdirSync(library("a"), { recursive: true });
  writeFileSync(
    join(library("a"), "2026-03-01-deploy-notes.md"),
    "---\ntitle: Deploy notes\nkeywords: deploy, ssh\nsummary: How we deploy\napplicable: prod\nlast_verified: 2026-03-02\n---\nUse the script.\n",
  );
  writeFileSync(join(library("a"), "2026-02-01-old-tip.md"), "---\ntitle: Old tip\n---\nbody\n");
  symlinkSync("/etc/passwd", join(library("a"), "2026-01-01-escape.md"));
  // A link to a's own private area: inside a's roots, outside its library. Only the library check stops it.
  writeFileSync(join(workspace.layout.agentTrees("a").privateDir, "private.md"), "private-note-of-a\n");
  symlinkSync(
    join(workspace.layout.agentTrees("a").privateDir, "private.md"),
    join(library("a"), "2026-01-02-sideways.md"),
  );
  // A draft made by the gap loop: its folder in a's own skills and its rows.
  await seedExportReportDraft(workspace, "a", "body\n");
  lessons = await seedLessons(workspace, "a");
  giveToAgent(
    workspace,
    "a",
    library("a"),
    workspace.layout.agentTrees("a").skillsDir,
    join(workspace.layout.agentTrees("a").privateDir, "private.md"),
  );
  admin = await launchTestAdmin(workspace, { secrets: [TOKEN], logLines });
}, 60_000);

afterAll(async () => {
  await admin?.close();
});

type Envelope = {
  ok: boolean; // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the tests read many shapes of data
  data?: any;
  error?: { code: string; message: string };
};

async function call(
  method: string,
  path: string,
  options: { token?: string | null; body?: unknown; rawBody?: string; type?: string } = {},
): Promise<{ status: number; json: Envelope; headers: Headers }> {
  const headers: Record<string, string> = {};
  if (options.token !== null) headers.authorization = `Bearer ${options.token ?? TOKEN}`;
  const body = options.rawBody ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
  if (body !== undefined) headers["content-type"] = options.type ?? "application/json";
  const response = await fetch(`${admin.url}${path}`, { method, headers, ...(body === undefined ? {} : { body }) });
  return { status: response.status, json: (await response.json()) as Envelope, headers: response.headers };
}

const docs = "/v1/agents/a/experience-library/docs";

describe("admin API: routes", () => {
  it("binds loopback; health answers without a token with the version only, and in full with it", async () => {
    expect(admin.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(await call("GET", "/v1/health", { token: null })).toMatchObject({
      status: 200,
      json: { ok: true, data: { ok: true, version: "9.9.9-test" } },
    });
    expect((await call("GET", "/v1/health", { token: null })).json.data).not.toHaveProperty("agents");
    const full = await call("GET", "/v1/health");
    expect(full.json.data).toMatchObject({
      ok: true,
      version: "9.9.9-test",
      agents: ["a", "b"],
      channels: ["console"],
      sandbox: "none",
    });
    // The replica: its name, the database's round trip, and (with the token) its leases and the live replicas.
    const replica = full.json.data.replica;
    expect(replica.name).toEqual(expect.any(String));
    expect(replica.database).toMatchObject({ engine: "sqlite", roundTripMs: expect.any(Number) });
    expect(replica.leases).toEqual(expect.any(Array));
    expect(replica.liveReplicas).toEqual(expect.any(Array));
    const open = (await call("GET", "/v1/health", { token: null })).json.data;
    expect(open.replica.database.roundTripMs).toEqual(expect.any(Number));
    expect(open.replica).not.toHaveProperty("leases");
    expect(full.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("GET /v1/agents lists every agent with its switch and document count", async () => {
    const result = await call("GET", "/v1/agents");
    expect(result.status).toBe(200);
    expect(result.json.data).toEqual([
      {
        id: "a",
        name: "A",
        libraryEnabled: true,
        documentCount: 2,
        gapCount: 3,
        openClusterCount: 0,
        draftCount: 1,
        lessonCounts: { draft: 1, active: 1, deprecated: 1 },
      },
      {
        id: "b",
        name: "B",
        libraryEnabled: true,
        documentCount: 0,
        gapCount: 0,
        openClusterCount: 0,
        draftCount: 0,
        lessonCounts: { draft: 0, active: 0, deprecated: 0 },
      },
    ]);
  }, 30_000);

  it("PATCH switches the library; every route keeps working while it is off", async () => {
    expect(await call("PATCH", "/v1/agents/a/experience-library", { body: { enabled: false } })).toMatchObject({
      status: 200,
      json: { data: { id: "a", libraryEnabled: false } },
    });
    const listing = await call("GET", docs);
    expect(listing.status).toBe(200);
    expect(listing.json.data.enabled).toBe(false);
    expect(listing.json.data.docs.map((doc: { fileName: string }) => doc.fileName)).toEqual([
      "2026-03-01-deploy-notes.md",
      "2026-02-01-old-tip.md",
    ]);
    expect(listing.json.data.docs[0]).toMatchObject({
      title: "Deploy notes",
      keywords: ["deploy", "ssh"],
      summary: "How we deploy",
      applicable: "prod",
      lastVerified: "2026-03-02",
      sizeBytes: expect.any(Number),
    });
    expect(Date.parse(listing.json.data.docs[0].updatedAt)).not.toBeNaN();
    expect(listing.json.data.indexContent).toBe(readFileSync(join(library("a"), "INDEX.md"), "utf8"));
    expect(listing.json.data.indexContent).toContain(
      "- 2026-03-01-deploy-notes.md | Deploy notes | deploy,ssh | How we deploy | verified 2026-03-02",
    );
    expect(
      (await call("PATCH", "/v1/agents/a/experience-library", { body: { enabled: true } })).json.data.libraryEnabled,
    ).toBe(true);
  }, 30_000);

  it("GET content returns one document's text, and INDEX.md may be read", async () => {
    const result = await call("GET", `${docs}/content?file=2026-03-01-deploy-notes.md`);
    expect(result).toMatchObject({
      status: 200,
      json: {
        ok: true,
        data: { fileName: "2026-03-01-deploy-notes.md", content: expect.stringContaining("Use the script.") },
      },
    });
    expect((await call("GET", `${docs}/content?file=INDEX.md`)).json.data.content).toContain("<!-- count: 2 -->");
    expect(await call("GET", `${docs}/content?file=2026-09-09-missing.md`)).toMatchObject({
      status: 404,
      json: { ok: false, error: { code: "DOC_NOT_FOUND" } },
    });
  });

  it("PUT writes a document (atomically, as the agent) and GET docs then shows its index line", async () => {
    const content = "---\ntitle: 新的经验\nkeywords: 部署\nsummary: 先备份\n---\n正文\n";
    const put = await call("PUT", `${docs}/content`, { body: { fileName: "2026-04-01-new-lesson.md", content } });
    expect(put).toMatchObject({
      status: 200,
      json: {
        ok: true,
        data: { fileName: "2026-04-01-new-lesson.md", created: true, sizeBytes: Buffer.byteLength(content) },
      },
    });
    expect(readFileSync(join(library("a"), "2026-04-01-new-lesson.md"), "utf8")).toBe(content);
    expect(readdirSync(library("a")).filter((name) => name.includes(".tmp-"))).toEqual([]);
    const listing = await call("GET", docs);
    expect(listing.json.data.indexContent).toContain(
      "- 2026-04-01-new-lesson.md | 新的经验 | 部署 | 先备份 | verified -",
    );
    expect(listing.json.data.docs[0].fileName).toBe("2026-04-01-new-lesson.md");
    expect(
      (await call("PUT", `${docs}/content`, { body: { fileName: "2026-04-01-new-lesson.md", content: "replaced\n" } }))
        .json.data.created,
    ).toBe(false);
  }, 30_000);

  it("DELETE removes a document and refreshes the index; a second DELETE is a 404", async () => {
    expect(await call("DELETE", `${docs}?file=2026-02-01-old-tip.md`)).toMatchObject({
      status: 200,
      json: { data: { fileName: "2026-02-01-old-tip.md", deleted: true } },
    });
    expect(existsSync(join(library("a"), "2026-02-01-old-tip.md"))).toBe(false);
    expect(readFileSync(join(library("a"), "INDEX.md"), "utf8")).not.toContain("old-tip");
    expect(await call("DELETE", `${docs}?file=2026-02-01-old-tip.md`)).toMatchObject({
      status: 404,
      json: { error: { code: "DOC_NOT_FOUND" } },
    });
  }, 30_000);

  it("POST index/rebuild regenerates the index", async () => {
    const result = await call("POST", "/v1/agents/a/experience-library/index/rebuild");
    expect(result).toMatchObject({
      status: 200,
      json: {
        data: { report: expect.stringMatching(/INDEX\.md regenerated \(rebuild\): 2 documents$/), documentCount: 2 },
      },
    });
  });

  it("GET capability-gaps serves the clusters `laoding gaps --json` shows", async () => {
    const result = await call("GET", "/v1/agents/a/capability-gaps?sinceHours=24");
    expect(result.status).toBe(200);
    expect(result.json.data).toMatchObject({
      agent: "a",
      sinceHours: 24,
      clusters: [
        {
          intentKey: "export_report",
          reason: "no_skill",
          count: 3,
          samples: expect.arrayContaining(["export the report 0"]),
          draft: { skillName: "auto-export-report", status: "drafted" },
        },
      ],
    });
    expect(await call("GET", "/v1/agents/a/capability-gaps?sinceHours=-1")).toMatchObject({
      status: 400,
      json: { error: { code: "INVALID_REQUEST" } },
    });
  });

  it("GET skill-drafts/:name shows the draft's row and SKILL.md", async () => {
    const result = await call("GET", "/v1/agents/a/skill-drafts/auto-export-report");
    expect(result).toMatchObject({
      status: 200,
      json: {
        data: {
          name: "auto-export-report",
          intentKey: "export_report",
          status: "drafted",
          content: expect.stringContaining("name: auto-export-report"),
        },
      },
    });
    expect(await call("GET", "/v1/agents/a/skill-drafts/auto-nothing")).toMatchObject({
      status: 404,
      json: { error: { code: "DRAFT_NOT_FOUND" } },
    });
    expect(await call("GET", "/v1/agents/a/skill-drafts/..%2F..%2Fetc")).toMatchObject({
      status: 400,
      json: { error: { code: "INVALID_REQUEST" } },
    });
  });

  it("DELETE skill-drafts/:name archives the folder under a dated name and keeps a tombstone row", async () => {
    const result = await call("DELETE", "/v1/agents/a/skill-drafts/auto-export-report");
    expect(result.status).toBe(200);
    const archived = result.json.data.archivedTo as string;
    const date = new Date().toISOString().slice(0, 10);
    expect(archived).toBe(
      join(workspace.layout.agentTrees("a").privateDir, "archive", "skills", `${date}-auto-export-report`),
    );
    expect(readFileSync(join(archived, "SKILL.md"), "utf8")).toContain("auto-export-report");
    expect(existsSync(join(workspace.layout.agentTrees("a").skillsDir, "auto-export-report"))).toBe(false);
    const store = await openStore(workspace.layout.databaseTarget, systemClock);
    expect(await store.clusters.draftFor("a", "export_report")).toMatchObject({
      status: "rejected",
      reason: expect.stringContaining("retired by an operator"),
    });
    // The tombstone keeps the gap loop from drafting it again.
    expect(await store.clusters.claimDraft("a", "export_report", "auto-export-report", 9)).toBe(false);
    await store.close();
    expect(await call("DELETE", "/v1/agents/a/skill-drafts/auto-export-report")).toMatchObject({
      status: 404,
      json: { error: { code: "DRAFT_NOT_FOUND" } },
    });
  });
});

describe("admin API: lessons", () => {
  const lessonsPath = "/v1/agents/a/experiences";

  it("GET experiences lists the agent's lessons, all or by status, with exp- ids and a boolean pin", async () => {
    const all = await call("GET", lessonsPath);
    expect(all.status).toBe(200);
    expect(all.json.data.map((lesson: { id: string; status: string }) => [lesson.id, lesson.status])).toEqual([
      [lessons.deploy, "active"],
      [lessons.backup, "draft"],
      [lessons.stale, "deprecated"],
    ]);
    expect(all.json.data[0]).toMatchObject({
      summary: expect.stringContaining("--force-tls"),
      category: "pitfall",
      confidence: 0.6,
      tags: ["deploy"],
      pinned: false,
      injectedCount: 20,
      usageCount: 20,
    });
    const drafts = await call("GET", `${lessonsPath}?status=draft`);
    expect(drafts.json.data.map((lesson: { id: string }) => lesson.id)).toEqual([lessons.backup]);
    expect((await call("GET", "/v1/agents/b/experiences")).json.data).toEqual([]);
    expect(await call("GET", `${lessonsPath}?status=retired`)).toMatchObject({
      status: 400,
      json: { ok: false, error: { code: "INVALID_REQUEST" } },
    });
  });

  it("GET experiences/:expId shows the lesson and its ledger history", async () => {
    const detail = await call("GET", `${lessonsPath}/${lessons.stale}`);
    expect(detail.status).toBe(200);
    expect(detail.json.data.lesson).toMatchObject({
      id: lessons.stale,
      status: "deprecated",
      deprecatedReason: "the cache reloads itself now",
    });
    expect(
      detail.json.data.ledger.map((entry: { action: string; actor: string }) => [entry.action, entry.actor]),
    ).toEqual([
      ["create", "distiller"],
      ["deprecate", "operator"],
    ]);
    expect(detail.json.data.ledger[1]).toMatchObject({
      reason: "the cache reloads itself now",
      before: { status: "active" },
      after: { status: "deprecated" },
    });
  });

  it("pin, unpin, deprecate and restore change the lesson and its ledger in the database", async () => {
    const base = `${lessonsPath}/${lessons.deploy}`;
    expect(await call("POST", `${base}/pin`)).toMatchObject({
      status: 200,
      json: { data: { id: lessons.deploy, pinned: true } },
    });
    expect(
      await call("POST", `${base}/deprecate`, { body: { reason: "the gateway takes TLS by default now" } }),
    ).toMatchObject({
      status: 200,
      json: { data: { status: "deprecated", deprecatedReason: "the gateway takes TLS by default now" } },
    });
    expect(await call("POST", `${base}/deprecate`, { body: { reason: "again" } })).toMatchObject({
      status: 409,
      json: { error: { code: "LESSON_STATE", message: expect.stringContaining("already deprecated") } },
    });
    expect(await call("POST", `${base}/restore`)).toMatchObject({
      status: 200,
      json: { data: { status: "draft", deprecatedReason: null } },
    });
    expect(await call("POST", `${base}/unpin`)).toMatchObject({ status: 200, json: { data: { pinned: false } } });
    const store = await openStore(workspace.layout.databaseTarget, systemClock);
    try {
      expect(await store.experiences.get(Number(lessons.deploy.slice(4)))).toMatchObject({
        status: "draft",
        pinned: 0,
      });
      expect(
        (await store.ledger.bySubject("experience", lessons.deploy)).map((entry) => [
          entry.action,
          entry.actor,
          entry.reason,
        ]),
      ).toEqual([
        ["create", "distiller", null],
        ["pin", "operator", null],
        ["deprecate", "operator", "the gateway takes TLS by default now"],
        ["restore", "operator", "restored by an operator"],
        ["unpin", "operator", null],
      ]);
    } finally {
      await store.close();
    }
  });

  it("deprecate needs a reason: a missing, empty or extra field is 400 INVALID_BODY and changes nothing", async () => {
    const path = `${lessonsPath}/${lessons.backup}/deprecate`;
    for (const body of [{}, { reason: "  " }, { reason: "x", extra: 1 }]) {
      expect(await call("POST", path, { body })).toMatchObject({
        status: 400,
        json: { ok: false, error: { code: "INVALID_BODY" } },
      });
    }
    expect((await call("GET", `${lessonsPath}/${lessons.backup}`)).json.data.lesson.status).toBe("draft");
  });

  it("unknown agents and lessons are 404, and a lesson of another agent is not found under this one", async () => {
    expect(await call("GET", "/v1/agents/zz/experiences")).toMatchObject({
      status: 404,
      json: { error: { code: "AGENT_NOT_FOUND" } },
    });
    expect(await call("GET", "/v1/agents/zz/experiences-report")).toMatchObject({
      status: 404,
      json: { error: { code: "AGENT_NOT_FOUND" } },
    });
    expect(await call("GET", `${lessonsPath}/exp-999999`)).toMatchObject({
      status: 404,
      json: { error: { code: "LESSON_NOT_FOUND" } },
    });
    expect(await call("POST", `${lessonsPath}/not-an-id/pin`)).toMatchObject({
      status: 404,
      json: { error: { code: "LESSON_NOT_FOUND" } },
    });
    expect(await call("POST", `/v1/agents/b/experiences/${lessons.backup}/pin`)).toMatchObject({
      status: 404,
      json: { error: { code: "LESSON_NOT_FOUND" } },
    });
    expect(await call("GET", `${lessonsPath}/${lessons.backup}/pin`)).toMatchObject({
      status: 405,
      json: { error: { code: "METHOD_NOT_ALLOWED" } },
    });
  });

  it("GET experiences-report is the effect report `laoding experiences report --json` prints for the agent", async () => {
    const result = await call("GET", "/v1/agents/a/experiences-report");
    expect(result.status).toBe(200);
    const store = await openStore(workspace.layout.databaseTarget, systemClock);
    try {
      expect(result.json.data).toEqual(JSON.parse(JSON.stringify(await effectReport(store, "a"))));
    } finally {
      await store.close();
    }
    const byTag = Object.fromEntries(result.json.data.byTag.map((tag: { tag: string }) => [tag.tag, tag]));
    expect(byTag.deploy).toMatchObject({
      treatment: { n: 20, successes: 18 },
      holdout: { n: 10, successes: 3 },
      effect: 0.6,
      verdict: "helps",
    });
    expect(byTag.backup).toMatchObject({ effect: null, interval: null, verdict: "insufficient data" });
  });
});

describe("admin API: refusals", () => {
  it("a missing or wrong token is a 401 on every route, and no token ever reaches the log", async () => {
    for (const [method, path] of [
      ["GET", "/v1/agents"],
      ["GET", docs],
      ["DELETE", "/v1/agents/a/skill-drafts/x"],
      ["GET", "/nope"],
    ] as const) {
      expect(await call(method, path, { token: null })).toMatchObject({
        status: 401,
        json: { ok: false, error: { code: "UNAUTHORIZED" } },
      });
      expect(await call(method, path, { token: "wrong-token-guess-0123456789" })).toMatchObject({
        status: 401,
        json: { error: { code: "UNAUTHORIZED" } },
      });
    }
    const result = await call("GET", "/v1/agents", { token: `${TOKEN}x` });
    expect(result.status).toBe(401);
    expect(result.headers.get("www-authenticate")).toContain("Bearer");
    const requests = logLines
      .map(
        (line) =>
          JSON.parse(line) as { msg: string; method?: string; path?: string; status?: number; durationMs?: number },
      )
      .filter((line) => line.msg === "admin request");
    expect(requests).toContainEqual(
      expect.objectContaining({ method: "GET", path: "/v1/agents", status: 401, durationMs: expect.any(Number) }),
    );
    expect(requests).toContainEqual(
      expect.objectContaining({ method: "PUT", path: "/v1/agents/a/experience-library/docs/content", status: 200 }),
    );
    const all = logLines.join("\n");
    expect(all).not.toContain(TOKEN);
    expect(all).not.toContain("wrong-token-guess");
    expect(all.toLowerCase()).not.toContain("authorization");
  });

  const badNames = [
    "../x.md",
    "/etc/passwd",
    "%2e%2e%2fx.md",
    "..%5cx.md",
    "a/b.md",
    "notes",
    "2026-01-01-notes.txt",
    "",
    "%252e%252e%252fx.md",
    "x.md",
    "2026-01-01-a%00.md",
  ];

  it("traversal and malformed names are refused with 400 INVALID_FILE_NAME for GET, PUT and DELETE", async () => {
    for (const name of badNames) {
      // Sent in the query as written: %2e%2e%2f arrives decoded as ../, %25 as a literal %.
      const read = await call("GET", `${docs}/content?file=${name}`);
      expect([name, read.status, read.json.error?.code]).toEqual([name, 400, "INVALID_FILE_NAME"]);
      const remove = await call("DELETE", `${docs}?file=${name}`);
      expect([name, remove.status, remove.json.error?.code]).toEqual([name, 400, "INVALID_FILE_NAME"]);
      const write = await call("PUT", `${docs}/content`, {
        body: { fileName: decodeURIComponent(name.replaceAll("%25", "%2525")), content: "x" },
      });
      expect([name, write.status, write.json.error?.code]).toEqual([name, 400, "INVALID_FILE_NAME"]);
    }
    for (const method of ["PUT", "DELETE"]) {
      const result =
        method === "PUT"
          ? await call("PUT", `${docs}/content`, { body: { fileName: "INDEX.md", content: "x" } })
          : await call("DELETE", `${docs}?file=INDEX.md`);
      expect(result).toMatchObject({
        status: 400,
        json: { error: { code: "INVALID_FILE_NAME", message: expect.stringContaining("generated") } },
      });
    }
    expect(await call("GET", `${docs}/content`)).toMatchObject({
      status: 400,
      json: { error: { code: "INVALID_FILE_NAME" } },
    });
    expect(existsSync(join(library("a"), "..", "x.md"))).toBe(false);
  });

  it("a document that is a link leading out of the library is never read, written or deleted", async () => {
    for (const result of [
      await call("GET", `${docs}/content?file=2026-01-01-escape.md`),
      await call("PUT", `${docs}/content`, { body: { fileName: "2026-01-01-escape.md", content: "owned" } }),
      await call("DELETE", `${docs}?file=2026-01-01-escape.md`),
    ]) {
      expect(result).toMatchObject({ status: 403, json: { ok: false, error: { code: "PATH_NOT_ALLOWED" } } });
      expect(JSON.stringify(result.json)).not.toContain("root:x:0:0");
    }
    expect(readFileSync("/etc/passwd", "utf8")).not.toContain("owned");
    for (const result of [
      await call("GET", `${docs}/content?file=2026-01-02-sideways.md`),
      await call("PUT", `${docs}/content`, { body: { fileName: "2026-01-02-sideways.md", content: "owned" } }),
      await call("DELETE", `${docs}?file=2026-01-02-sideways.md`),
    ]) {
      expect(result).toMatchObject({ status: 403, json: { ok: false, error: { code: "PATH_NOT_ALLOWED" } } });
      expect(JSON.stringify(result.json)).not.toContain("private-note-of-a");
    }
    expect(readFileSync(join(workspace.layout.agentTrees("a").privateDir, "private.md"), "utf8")).toBe(
      "private-note-of-a\n",
    );
    // A refused delete removes neither the link nor what it points to.
    expect(lstatSync(join(library("a"), "2026-01-02-sideways.md")).isSymbolicLink()).toBe(true);
    expect(lstatSync(join(library("a"), "2026-01-01-escape.md")).isSymbolicLink()).toBe(true);
  });

  it("a chunked body without a length is cut off at the limit with 413", async () => {
    const { request } = await import("node:http");
    const url = new URL(`${admin.url}${docs}/content`);
    const status = await new Promise<number>((resolve, reject) => {
      const outgoing = request(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          method: "PUT",
          headers: {
            authorization: `Bearer ${TOKEN}`,
            "content-type": "application/json",
            "transfer-encoding": "chunked",
          },
        },
        (response) => {
          response.resume();
          resolve(response.statusCode ?? 0);
        },
      );
      outgoing.on("error", reject);
      for (let index = 0; index < 10; index += 1) outgoing.write("x".repeat(1000));
      outgoing.end();
    });
    expect(status).toBe(413);
  });

  it("oversized bodies are 413, malformed ones 400, other media types 415", async () => {
    expect(
      await call("PUT", `${docs}/content`, { body: { fileName: "2026-05-01-big.md", content: "x".repeat(5000) } }),
    ).toMatchObject({ status: 413, json: { error: { code: "BODY_TOO_LARGE" } } });
    expect(await call("PUT", `${docs}/content`, { rawBody: "{not json" })).toMatchObject({
      status: 400,
      json: { error: { code: "INVALID_BODY" } },
    });
    expect(await call("PUT", `${docs}/content`, { body: { fileName: "2026-05-01-a.md" } })).toMatchObject({
      status: 400,
      json: { error: { code: "INVALID_BODY", message: expect.stringContaining("content") } },
    });
    expect(await call("PATCH", "/v1/agents/a/experience-library", { body: { enabled: "yes" } })).toMatchObject({
      status: 400,
      json: { error: { code: "INVALID_BODY" } },
    });
    expect(
      await call("PATCH", "/v1/agents/a/experience-library", {
        rawBody: "enabled=true",
        type: "application/x-www-form-urlencoded",
      }),
    ).toMatchObject({ status: 415, json: { error: { code: "UNSUPPORTED_MEDIA_TYPE" } } });
    expect(existsSync(join(library("a"), "2026-05-01-big.md"))).toBe(false);
  });

  it("unknown agents are 404, unknown routes 404, wrong methods 405", async () => {
    for (const path of [
      "/v1/agents/zed/experience-library/docs",
      "/v1/agents/zed/capability-gaps",
      "/v1/agents/..%2Fa/experience-library/docs",
    ]) {
      expect(await call("GET", path)).toMatchObject({ status: 404, json: { error: { code: "AGENT_NOT_FOUND" } } });
    }
    expect(await call("PATCH", "/v1/agents/zed/experience-library", { body: { enabled: true } })).toMatchObject({
      status: 404,
      json: { error: { code: "AGENT_NOT_FOUND" } },
    });
    expect(await call("GET", "/v1/nothing")).toMatchObject({ status: 404, json: { error: { code: "NOT_FOUND" } } });
    const wrong = await call("POST", "/v1/agents");
    expect(wrong).toMatchObject({ status: 405, json: { error: { code: "METHOD_NOT_ALLOWED" } } });
    expect(wrong.headers.get("allow")).toBe("GET");
  });
});
