/**
 * Crash accounting (issue 8, finding 4; DECISIONS.md): what is quarantined after a crash
 * is the request or the session, never the agent. A read that crashed the child is
 * retried once, alone; a call that crashes it twice is refused for its session; crashes
 * a call can be blamed for never spend the agent's restart budget. A call is its tool and
 * its path: respelling the other arguments does not buy new crashes (issue 32, item 2).
 */
import { describe, expect, it } from "vitest";
import { makeClient } from "../helpers/toolhost.js";

describe("crash accounting", () => {
  it("a read that kills the child twice is refused for its session, never retried into a third crash; the agent stays up for others", async () => {
    // A budget of 2 crashes: without blame, the second crash would put the agent down.
    const { client, spawns } = makeClient({ restart: { maxCrashes: 2 } });
    const poison = { name: "file.read", args: { kill: true, path: "poison.txt" }, cwd: "/chat/one" };
    expect(await client.callTool(poison)).toMatchObject({ ok: false, error: { code: "TOOLHOST_CRASHED" } });
    // The first try and the lone retry: two children died.
    expect(spawns).toHaveLength(2);
    expect(await client.callTool(poison)).toMatchObject({
      ok: false,
      error: {
        code: "TOOLHOST_CRASHED",
        reason: expect.stringMatching(
          /crashed the toolhost twice; file\.read on this path is not run again in this session/,
        ),
      },
    });
    expect(spawns).toHaveLength(2);
    // Another session, and every other call, still works.
    expect(await client.callTool({ name: "file.read", args: { n: 1 }, cwd: "/chat/two" })).toMatchObject({ ok: true });
    expect(client.supervisor.state).toBe("running");
    // The same request from another session is its own: it gets its own two tries.
    expect(await client.callTool({ ...poison, cwd: "/chat/two" })).toMatchObject({
      ok: false,
      error: { code: "TOOLHOST_CRASHED" },
    });
    expect(
      await client.callTool({ name: "file.read", args: { n: 2, path: "notes.txt" }, cwd: "/chat/one" }),
    ).toMatchObject({ ok: true });
  });

  it("a grep that crashed the child twice stays refused on that path however its pattern or path is respelled", async () => {
    // The attack: each one-character change of the pattern used to buy two more crashes.
    const { client, spawns } = makeClient();
    const grep = (pattern: string, path: string, cwd = "/chat/one") =>
      client.callTool({ name: "file.grep", args: { kill: true, pattern, path }, cwd });
    expect(await grep("[a-z]{1,1000}[0-9]", "big.txt")).toMatchObject({
      ok: false,
      error: { code: "TOOLHOST_CRASHED" },
    });
    expect(spawns).toHaveLength(2);
    for (const [pattern, path] of [
      ["[a-z]{1,999}[0-9]", "big.txt"],
      ["[a-y]{1,1000}[0-9]", "./big.txt"],
      ["[a-z]{1,1000}\\d", "/chat/one/sub/../big.txt"],
    ] as const) {
      expect(await grep(pattern, path), `${pattern} on ${path}`).toMatchObject({
        ok: false,
        error: {
          code: "TOOLHOST_CRASHED",
          reason: expect.stringMatching(
            /crashed the toolhost twice; file\.grep on this path is not run again in this session, whatever its other arguments/,
          ),
        },
      });
    }
    // Refused without reaching a child: no new one was started.
    expect(spawns).toHaveLength(2);
    // Another path, another tool on that path, and another session still run.
    expect(
      await client.callTool({ name: "file.grep", args: { pattern: "x", path: "small.txt" }, cwd: "/chat/one" }),
    ).toMatchObject({ ok: true });
    expect(await client.callTool({ name: "file.read", args: { path: "big.txt" }, cwd: "/chat/one" })).toMatchObject({
      ok: true,
    });
    expect(
      await client.callTool({ name: "file.grep", args: { pattern: "x", path: "big.txt" }, cwd: "/chat/two" }),
    ).toMatchObject({ ok: true });
  });

  it("the retry runs alone: a second crash does not take other users' calls down with it", async () => {
    const { client } = makeClient({ concurrency: 4 });
    const slow = client.callTool({ name: "file.read", args: { sleepMs: 300 }, cwd: "/chat/other" });
    const poison = client.callTool({ name: "file.read", args: { kill: true, exitAfterMs: 50 }, cwd: "/chat/one" });
    // The slow call was in flight at the first crash: as a read it is retried, and succeeds.
    expect(await slow).toMatchObject({ ok: true });
    expect(await poison).toMatchObject({ ok: false, error: { code: "TOOLHOST_CRASHED" } });
    const during = await Promise.all(
      [1, 2, 3].map((n) => client.callTool({ name: "file.read", args: { n }, cwd: "/chat/other" })),
    );
    expect(during.every((result) => result.ok)).toBe(true);
  });

  it("a write that crashed the child is never retried; twice, and it is refused for the session", async () => {
    const { client, spawns } = makeClient();
    const write = { name: "file.write", args: { kill: true }, cwd: "/chat/one" };
    expect(await client.callTool(write)).toMatchObject({ ok: false, error: { code: "TOOLHOST_CRASHED" } });
    expect(await client.callTool({ name: "file.read", args: {} })).toMatchObject({ ok: true });
    expect(spawns).toHaveLength(2);
    expect(await client.callTool(write)).toMatchObject({ ok: false, error: { code: "TOOLHOST_CRASHED" } });
    expect(await client.callTool(write)).toMatchObject({
      ok: false,
      error: { reason: expect.stringMatching(/twice/) },
    });
    // One new child per crash, none for the refusal; the agent still answers.
    expect(await client.callTool({ name: "file.read", args: {} })).toMatchObject({ ok: true });
    expect(spawns).toHaveLength(3);
  });

  it("crashes no call can be blamed for still count toward the restart budget", async () => {
    const { client, supervisor } = makeClient({ mode: "die-after-50ms", restart: { maxCrashes: 2 } });
    await client.ping().catch(() => undefined);
    await new Promise<void>((resolve) => {
      const check = setInterval(() => {
        if (supervisor.state === "failed") {
          clearInterval(check);
          resolve();
        }
      }, 10);
    });
    expect(await client.callTool({ name: "file.read", args: {} })).toMatchObject({
      ok: false,
      error: { code: "TOOLHOST_UNAVAILABLE" },
    });
  });
});
