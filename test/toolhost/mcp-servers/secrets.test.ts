/**
 * Every `$NAME` value the parent resolved (mcp.configure's `secrets`: in env, args, the
 * URL or headers) is hidden in everything the manager says: status and last error, test
 * results, tool descriptions, outputs and errors, and its log lines, also where a text is
 * cut (a cut secret must not show half of itself).
 */
import { describe, expect, it } from "vitest";
import { redactJson, TextTail } from "../../../src/toolhost/mcp-servers/redact.js";
import { serverTools } from "../../../src/toolhost/mcp-servers/server-tools.js";
import type { McpServerConfig } from "../../../src/toolhost/protocol.js";
import { callOn, fakeStdio, makeManager, SLOW_TEST, TIMEOUTS } from "./mcp-setup.js";

const SECRET = "argtoken-9f8e7d6c5b4a3210";
/** Its last characters: what a tail cut through it would show. */
const SECRET_END = SECRET.slice(-10);

/** A stdio server given the secret in its arguments that prints it on stderr and exits, as a server refusing its token does. */
const leaky: McpServerConfig = {
  name: "leaky",
  transport: "stdio",
  command: process.execPath,
  args: [
    "-e",
    // 25 + 343 + 3 + 41 characters once joined: a 400-character tail cut before hiding would start inside the first secret.
    'const t = process.argv[1]; process.stderr.write(`${t}${"x".repeat(343)}\\ntoken rejected: ${t}\\n`); process.exit(2)',
    SECRET,
  ],
  env: {},
};

describe("the secrets of $NAME values", SLOW_TEST, () => {
  it("a secret in a stdio server's args that it prints on stderr appears nowhere: status, test result, log", async () => {
    const { manager, logs } = makeManager();
    manager.configure({ servers: [leaky], ...TIMEOUTS, secrets: [SECRET] });
    expect(await manager.tools()).toEqual([]);
    const [status] = manager.status();
    expect(status).toMatchObject({
      state: "backoff",
      lastError: `exited with code 2 before it answered; stderr: ***${"x".repeat(343)} | token rejected: ***`,
    });
    const tested = await manager.test("leaky");
    expect(tested).toMatchObject({ ok: false, error: expect.stringMatching(/^exited with code 2 before it answered/) });
    const said = JSON.stringify([manager.status(), tested, logs]);
    expect(said).toContain("token rejected: ***");
    expect(said).not.toContain(SECRET_END);
  });

  it("a remote server's URL secret never shows in its failure", async () => {
    const { manager, logs } = makeManager({ fetch: () => Promise.reject(new TypeError("fetch failed")) });
    const host = `${SECRET}.mcp.invalid`;
    manager.configure({
      servers: [{ name: "docs", transport: "http", url: `https://${host}/mcp`, headers: {} }],
      ...TIMEOUTS,
      secrets: [SECRET],
    });
    expect(await manager.tools()).toEqual([]);
    expect(manager.status()[0]?.lastError).toBe("cannot connect to https://***.mcp.invalid: fetch failed");
    expect(JSON.stringify(logs)).not.toContain(SECRET);
  });

  it("a running server's outputs and errors hide a secret given in its args", async () => {
    const { manager } = makeManager();
    manager.configure({ servers: [fakeStdio({ flags: [`--label=${SECRET}`] })], ...TIMEOUTS, secrets: [SECRET] });
    const call = callOn(manager);
    expect(await call("mcp.fake.echo", { text: `the token is ${SECRET}` })).toEqual({
      output: "the token is ***",
      truncated: false,
    });
    expect(await call("mcp.fake.fail", { message: `${SECRET} was refused` })).toEqual({
      code: "MCP_TOOL_ERROR",
      reason: "fake: *** was refused",
    });
  });

  it("tool descriptions and schemas hide them, before a long description is cut", () => {
    const hide = {
      text: (text: string) => text.split(SECRET).join("***"),
      json: <T>(value: T) => redactJson(value, [SECRET]),
    };
    const tools = serverTools(
      "s",
      [
        {
          name: "t",
          description: `${"d".repeat(1_015)}${SECRET}`,
          inputSchema: { type: "object", properties: { key: { type: "string", default: SECRET } } },
        },
      ],
      () => Promise.reject(new Error("not called")),
      () => undefined,
      hide,
    );
    const tool = tools.get("mcp.s.t")?.tool;
    expect(tool?.description).toBe(`${"d".repeat(1_015)}***`);
    expect(tool?.jsonSchema).toEqual({ type: "object", properties: { key: { type: "string", default: "***" } } });
  });

  it("a stderr tail whose start was dropped leaves out its first, partial line", () => {
    const tail = new TextTail(64);
    tail.push(`first ${SECRET} line\n`);
    tail.push(`${"y".repeat(40)}\nlast line\n`);
    expect(tail.lastLines(400, (text) => text.split(SECRET).join("***"))).toBe(`${"y".repeat(40)} | last line`);
  });
});
