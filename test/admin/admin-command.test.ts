/**
 * `laoding admin` and `laoding start` refuse to serve the admin API without a token, and
 * the operator.* tools exist only in the operator's maintenance children.
 */
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { pino } from "pino";
import { startAdminServer } from "../../src/admin/admin-server.js";
import { createTools } from "../../src/toolhost/tools/tool-registry.js";
import { runLaoding } from "../helpers/cli.js";
import { fakeRepo, tempDir } from "../helpers/temp-dir.js";

let repoRoot: string;
let workspaceDir: string;

beforeAll(async () => {
  repoRoot = fakeRepo({ scope: "file" });
  workspaceDir = join(tempDir("laoding-admincli-", "file"), "rt");
  expect((await runLaoding(["init", "--workspace", workspaceDir], { repoRoot })).code).toBe(0);
  appendFileSync(join(workspaceDir, "configs", "env"), "\nTOOLHOST_SANDBOX=none\n");
});

describe("laoding admin", () => {
  it("never starts without ADMIN_TOKEN, and says how to set one", async () => {
    const result = await runLaoding(["admin", "--port", "0", "--workspace", workspaceDir], { repoRoot });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("ADMIN_TOKEN is not set: the admin API never runs without a token");
    expect(result.stderr).toContain("openssl rand -hex 24");
  });

  it("needs a port: ADMIN_PORT or --port", async () => {
    const result = await runLaoding(["admin", "--workspace", workspaceDir], {
      repoRoot,
      env: { ADMIN_TOKEN: "a-token-of-enough-length" },
    });
    expect(result).toMatchObject({ code: 2, stderr: expect.stringContaining("ADMIN_PORT is 0 (off)") });
    expect(await runLaoding(["admin", "--port", "99999", "--workspace", workspaceDir], { repoRoot })).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("--port must be a port"),
    });
  });

  it("laoding start with ADMIN_PORT set and no token stops before the bot starts", async () => {
    const result = await runLaoding(["start", "--workspace", workspaceDir], { repoRoot, env: { ADMIN_PORT: "18787" } });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("ADMIN_TOKEN is not set");
  });
});

describe("admin server start", () => {
  it("a port in use is a clear start error naming the address and what to change", async () => {
    const logger = pino({ level: "silent" });
    const first = await startAdminServer({
      host: "127.0.0.1",
      port: 0,
      token: "a-token-of-enough-length",
      bodyMaxBytes: 1024,
      routes: [],
      logger,
    });
    try {
      const port = Number(new URL(first.url).port);
      await expect(
        startAdminServer({
          host: "127.0.0.1",
          port,
          token: "a-token-of-enough-length",
          bodyMaxBytes: 1024,
          routes: [],
          logger,
        }),
      ).rejects.toThrow(
        `the admin API cannot listen on 127.0.0.1:${port} (EADDRINUSE): choose another ADMIN_PORT or ADMIN_HOST`,
      );
      // The scheme is case-insensitive (RFC 9110); the route table is empty, so an authorized request finds no route.
      const response = await fetch(`${first.url}/v1/x`, {
        headers: { authorization: "bearer a-token-of-enough-length" },
      });
      expect(response.status).toBe(404);
    } finally {
      await first.close();
    }
  });
});

describe("operator tools", () => {
  it("are served only to a maintenance child, never to a chat agent's", () => {
    const library = { dir: "/nonexistent/lib", locale: "en" as const };
    const chat = createTools({ allowedCommands: [], network: false, library }).map((tool) => tool.name);
    expect(chat.some((name) => name.startsWith("operator."))).toBe(false);
    const operator = createTools({ allowedCommands: [], network: false, library, operatorTools: true }).map(
      (tool) => tool.name,
    );
    expect(operator.filter((name) => name.startsWith("operator."))).toEqual([
      "operator.read",
      "operator.write",
      "operator.delete",
      "operator.move",
      "operator.stat",
      "operator.library-docs",
    ]);
  });
});
