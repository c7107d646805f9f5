/**
 * Done-when of the experience library: in a real chat turn (fake model over HTTP, real
 * orchestrator, real toolhost child, real SQLite) the agent greps the index, reads a
 * document, writes a new one, and the index shows it at once.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { routeTo } from "../fakes/openai-server.js";
import { startTestBot } from "../helpers/bot.js";

const DEADLOCK = `---
title: MySQL 死锁排查实录
keywords: mysql, 死锁, innodb
summary: 三步定位:锁等待图 -> 事务回滚顺序 -> 索引缺失加锁放大
last_verified: 2026-10-24
---
1. SHOW ENGINE INNODB STATUS
2. Roll back the younger transaction
3. Add the missing index
`;

const NEW_DOC = `---
title: 订单表死锁:缺失索引
keywords: mysql, 死锁, orders
summary: orders.user_id 没有索引导致间隙锁放大;加索引后消失
applicable: MySQL 8 / backend
last_verified: 2026-12-01
---
Found by following 2026-10-24-mysql-deadlock.md.
`;

describe("an experience-library turn end to end", () => {
  it("greps the index, reads a document, writes a new one that is indexed at once", async () => {
    const bot = await startTestBot({ env: { REACT_MAX_STEPS: "6" } });
    const library = bot.layout.agentTrees("main").experienceDir;
    writeFileSync(join(library, "2026-10-24-mysql-deadlock.md"), DEADLOCK);
    bot.fake.enqueue(
      routeTo([], "mysql-deadlock"),
      { toolCalls: [{ name: "file_grep", arguments: { pattern: "死锁", path: "团队经验/INDEX.md" } }] },
      { toolCalls: [{ name: "file_read", arguments: { path: "团队经验/2026-10-24-mysql-deadlock.md" } }] },
      {
        toolCalls: [
          { name: "file_write", arguments: { path: "团队经验/2026-12-01-orders-deadlock.md", content: NEW_DOC } },
        ],
      },
      { toolCalls: [{ name: "library_search", arguments: { query: "orders 死锁" } }] },
      { text: "Fixed: orders.user_id needed an index. I saved the finding to the team library." },
    );
    const answer = await bot.send("orders 表又死锁了,帮我查一下");
    expect(answer).toBe("Fixed: orders.user_id needed an index. I saved the finding to the team library.");

    const results = bot.fake.requests.slice(2).map((request) => request.messages.at(-1)?.content ?? "");
    expect(results[0]).toContain("2026-10-24-mysql-deadlock.md | MySQL 死锁排查实录");
    expect(results[1]).toContain("SHOW ENGINE INNODB STATUS");
    expect(results[2]).toMatch(
      /^created 团队经验\/2026-12-01-orders-deadlock\.md \(\d+ bytes\); library index updated \(2 documents\)$/,
    );
    expect(results[3]?.split("\n")[1]).toMatch(
      /^- 2026-12-01-orders-deadlock\.md \| 订单表死锁:缺失索引 \| mysql,死锁,orders \|/,
    );

    const index = readFileSync(join(library, "INDEX.md"), "utf8").split("\n");
    expect(index.slice(1, 4)).toEqual([
      "<!-- count: 2 -->",
      "- 2026-12-01-orders-deadlock.md | 订单表死锁:缺失索引 | mysql,死锁,orders | orders.user_id 没有索引导致间隙锁放大;加索引后消失 | verified 2026-12-01",
      "- 2026-10-24-mysql-deadlock.md | MySQL 死锁排查实录 | mysql,死锁,innodb | 三步定位:锁等待图 -> 事务回滚顺序 -> 索引缺失加锁放大 | verified 2026-10-24",
    ]);
    const calls = await bot.runtime.store.sql.all("SELECT tool, ok FROM tool_calls ORDER BY id");
    expect(calls).toEqual([
      { tool: "file.grep", ok: 1 },
      { tool: "file.read", ok: 1 },
      { tool: "file.write", ok: 1 },
      { tool: "library.search", ok: 1 },
    ]);
  }, 60_000);
});
