/**
 * The agents' sockets themselves: where they are, who may open them, that the socket a
 * connection arrives on decides whose list applies, stale files, limits, bad request
 * heads, and teardown.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdirSync, statSync, writeFileSync } from "node:fs";
import { connect, createServer } from "node:net";
import { join } from "node:path";
import { pino } from "pino";
import { describe, expect, it, vi } from "vitest";
import { parseAllowList } from "../../src/egress/allow-list.js";
import { startEgressProxy } from "../../src/egress/egress-proxy.js";
import { tempDir } from "../helpers/temp-dir.js";
import {
  connectThrough,
  headerMap,
  proxiedRequest,
  readHead,
  readToEnd,
  startEcho,
  startOrigin,
  startProxy,
} from "./proxy-fixture.js";

const silent = pino({ level: "silent" });
const HOSTS = "127.0.0.1 allowed.test\n";

describe("egress proxy sockets", () => {
  it("creates the folder 0711 and each socket 0600, owned by the agent when an owner is given", async (context) => {
    if (process.getuid?.() !== 0) context.skip("chown needs root");
    const socketDir = join(tempDir("laoding-egress-sock-"), "run", "egress");
    const proxy = startEgressProxy({ socketDir, hosts: new Map(), ownEndpoints: [], logger: silent });
    try {
      expect(statSync(socketDir).mode & 0o777).toBe(0o711);
      const path = await proxy.addAgent({ agentId: "alpha", allow: [], owner: { uid: 65534, gid: 65534 } });
      expect(path).toBe(join(socketDir, "alpha.sock"));
      expect(proxy.socketFor("alpha")).toBe(path);
      const stat = statSync(path);
      expect(stat.isSocket()).toBe(true);
      expect(stat.mode & 0o777).toBe(0o600);
      expect([stat.uid, stat.gid]).toEqual([65534, 65534]);
      // The agent's uid can connect; another uid cannot.
      expect(await Promise.all([connectAs(65534, path), connectAs(65533, path)])).toEqual(["connected", "EACCES"]);
    } finally {
      await proxy.close();
    }
  });

  it("decides by the socket a connection arrives on: each agent gets its own list", async () => {
    const origin = await startOrigin("allowed");
    const { proxy, socketDir } = await startProxy({ allow: ["allowed.test"], hosts: HOSTS });
    const other = await proxy.addAgent({ agentId: "beta", allow: parseAllowList(["elsewhere.test"]) });
    expect(other).toBe(join(socketDir, "beta.sock"));
    const url = `http://allowed.test:${origin.port}/`;
    expect((await proxiedRequest(join(socketDir, "alpha.sock"), url)).status).toBe(200);
    expect((await proxiedRequest(other, url)).status).toBe(403);
    expect(proxy.stats("alpha")).toMatchObject({ allowed: 1, refused: 0 });
    expect(proxy.stats("beta")).toMatchObject({ allowed: 0, refused: 1 });
    expect(proxy.stats("nobody")).toBeUndefined();
  });

  it("replaces a stale socket file, but never a live socket or a file that is not a socket", async () => {
    const socketDir = tempDir("laoding-egress-stale-");
    // A socket left behind by a process that died: a child binds it and is killed.
    const leftover = join(socketDir, "alpha.sock");
    const child = spawn(
      process.execPath,
      ["-e", `require("node:net").createServer().listen(${JSON.stringify(leftover)}, () => console.log("up"))`],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    await once(child.stdout, "data");
    child.kill("SIGKILL");
    await once(child, "exit");
    expect(existsSync(leftover)).toBe(true);

    const proxy = startEgressProxy({ socketDir, hosts: new Map(), ownEndpoints: [], logger: silent });
    try {
      await expect(proxy.addAgent({ agentId: "alpha", allow: [] })).resolves.toBe(leftover);
      const live = createServer().listen(join(socketDir, "beta.sock"));
      await once(live, "listening");
      await expect(proxy.addAgent({ agentId: "beta", allow: [] })).rejects.toThrow(/is served by another process/);
      live.close();
      writeFileSync(join(socketDir, "gamma.sock"), "not a socket");
      await expect(proxy.addAgent({ agentId: "gamma", allow: [] })).rejects.toThrow(/exists and is not a socket/);
      await expect(proxy.addAgent({ agentId: "alpha", allow: [] })).rejects.toThrow(/already has an egress socket/);
      await expect(proxy.addAgent({ agentId: "../x", allow: [] })).rejects.toThrow(/cannot name an egress socket/);
      expect(proxy.socketFor("gamma")).toBeUndefined();
    } finally {
      await proxy.close();
    }
  });

  it("refuses a socket folder path too long for a Unix socket", async () => {
    const socketDir = join(tempDir("laoding-egress-long-"), "x".repeat(100));
    mkdirSync(socketDir);
    const proxy = startEgressProxy({ socketDir, hosts: new Map(), ownEndpoints: [], logger: silent });
    await expect(proxy.addAgent({ agentId: "alpha", allow: [] })).rejects.toThrow(/limit of a Unix socket path/);
  });

  it("refuses own endpoints given as names", () => {
    expect(() =>
      startEgressProxy({
        socketDir: tempDir("laoding-egress-own-"),
        hosts: new Map(),
        ownEndpoints: [{ label: "model endpoint", address: "llm.example", port: 443 }],
        logger: silent,
      }),
    ).toThrow(/own endpoint "model endpoint".*resolve names/);
  });

  it("answers 400 for a request head over 64 KiB and for garbage", async () => {
    const { socketPath, logs } = await startProxy({ allow: ["allowed.test"], hosts: HOSTS });
    const big = connect(socketPath);
    await once(big, "connect");
    big.write(`GET http://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\nX-Big: ${"a".repeat(70 * 1024)}\r\n\r\n`);
    const bigAnswer = await readHead(big);
    expect(bigAnswer.statusLine).toBe("HTTP/1.1 400 Bad Request");
    expect(await readToEnd(big, bigAnswer.rest)).toBe("the request head is over 64 KiB");

    const garbage = connect(socketPath);
    await once(garbage, "connect");
    garbage.write("\x16\x03\x01 this is not http\r\n\r\n");
    const garbageAnswer = await readHead(garbage);
    expect(garbageAnswer.statusLine).toBe("HTTP/1.1 400 Bad Request");
    expect(await readToEnd(garbage, garbageAnswer.rest)).toMatch(/^the request is not valid HTTP\/1\.1 \(HPE_/);
    expect(logs.filter((line) => line.msg === "egress request rejected")).toHaveLength(2);
  });

  it("accepts a large but legal head", async () => {
    const origin = await startOrigin("allowed");
    const { socketPath } = await startProxy({ allow: ["allowed.test"], hosts: HOSTS });
    const response = await proxiedRequest(socketPath, `http://allowed.test:${origin.port}/`, {
      headers: { "X-Big": "b".repeat(40 * 1024) },
    });
    expect(response.status).toBe(200);
    expect(origin.requests[0]?.headers["x-big"]).toHaveLength(40 * 1024);
  });

  it("turns away connections over the agent's limit with 503", async () => {
    const echo = await startEcho();
    const { socketPath } = await startProxy({ allow: ["allowed.test"], hosts: HOSTS, maxConnectionsPerAgent: 1 });
    const first = await connectThrough(socketPath, `allowed.test:${echo.port}`);
    expect(first.statusLine).toBe("HTTP/1.1 200 Connection established");
    const second = await connectThrough(socketPath, `allowed.test:${echo.port}`);
    expect(second.statusLine).toBe("HTTP/1.1 503 Service Unavailable");
    expect(headerMap(second.head)["x-laoding-failed"]).toContain("already has 1 connections open");
    expect(echo.connections).toBe(1);
  });

  it("removing an agent closes its socket, its tunnels and their upstream connections", async () => {
    const echo = await startEcho();
    const { socketPath, proxy } = await startProxy({ allow: ["allowed.test"], hosts: HOSTS });
    const tunnel = await connectThrough(socketPath, `allowed.test:${echo.port}`);
    expect(tunnel.statusLine).toBe("HTTP/1.1 200 Connection established");
    await vi.waitFor(() => expect(echo.open.size).toBe(1));
    const closed = once(tunnel.socket, "close");
    tunnel.socket.resume();
    await proxy.removeAgent("alpha");
    await closed;
    await vi.waitFor(() => expect(echo.open.size).toBe(0));
    expect(existsSync(socketPath)).toBe(false);
    expect(proxy.socketFor("alpha")).toBeUndefined();
    await proxy.removeAgent("alpha"); // idempotent
  });
});

/** Connects to `path` from a child process running as `uid`; prints "connected" or the error code. */
async function connectAs(uid: number, path: string): Promise<string> {
  const script = `require("node:net").connect(${JSON.stringify(path)})
    .on("connect", () => { console.log("connected"); process.exit(0); })
    .on("error", (error) => { console.log(error.code); process.exit(0); });`;
  const child = spawn(process.execPath, ["-e", script], { uid, gid: uid, stdio: ["ignore", "pipe", "inherit"] });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  await once(child, "exit");
  return output.trim();
}
