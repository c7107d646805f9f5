/**
 * The audit rule in a real chat turn (fake model over HTTP, real orchestrator, real
 * toolhost child, real SQLite): a tool result reaches the model only once its audit row
 * is committed, and a row the database refuses withholds the result, says the call may
 * have run, and is written later.
 */
import { describe, expect, it } from "vitest";
import type { Engine } from "../../src/store/sql/sql-driver.js";
import { routeTo } from "../fakes/openai-server.js";
import { startTestBot } from "../helpers/bot.js";

/** A trigger that refuses every audit row the way a full disk would, and its removal, on each engine. */
const REFUSE_AUDIT: Record<Engine, string> = {
  sqlite:
    "CREATE TRIGGER refuse_audit BEFORE INSERT ON tool_calls BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END",
  postgres: `CREATE FUNCTION refuse_audit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'database or disk is full'; END $$;
    CREATE TRIGGER refuse_audit BEFORE INSERT ON tool_calls FOR EACH ROW EXECUTE FUNCTION refuse_audit()`,
};
const ALLOW_AUDIT: Record<Engine, string> = {
  sqlite: "DROP TRIGGER refuse_audit",
  postgres: "DROP TRIGGER refuse_audit ON tool_calls; DROP FUNCTION refuse_audit()",
};

describe("the tool-call audit in a chat turn", () => {
  it("a result whose row the database refuses is withheld from the model; the row is written with a later call", async () => {
    const bot = await startTestBot();
    const { sql } = bot.runtime.store;
    await sql.exec(REFUSE_AUDIT[sql.engine]);
    bot.fake.enqueue(
      routeTo([], "write-notes"),
      { toolCalls: [{ name: "file_write", arguments: { path: "notes.txt", content: "remember the milk\n" } }] },
      { text: "I could not confirm the note was saved." },
    );
    expect(await bot.send("save a note: remember the milk")).toBe("I could not confirm the note was saved.");
    const observation = bot.fake.requests[2]?.messages.at(-1)?.content ?? "";
    expect(observation).toMatch(
      /^ERROR_CODE=INTERNAL; TOOL=file\.write; REASON=its audit record could not be stored \(database or disk is full\), so its result is withheld; the call may have run and had its effects/,
    );
    expect(await sql.get("SELECT count(*) AS n FROM tool_calls")).toEqual({ n: 0 });

    await sql.exec(ALLOW_AUDIT[sql.engine]);
    bot.fake.enqueue(
      routeTo([], "read-notes"),
      { toolCalls: [{ name: "file_read", arguments: { path: "notes.txt" } }] },
      { text: "The note says: remember the milk." },
    );
    expect(await bot.send("what does my note say?")).toBe("The note says: remember the milk.");
    // The read's result reached the model, so its row (and the refused write's, tried again first) is in the file.
    expect(bot.fake.requests[5]?.messages.at(-1)?.content).toBe("remember the milk\n");
    expect(await sql.all("SELECT tool, ok FROM tool_calls ORDER BY id")).toEqual([
      { tool: "file.write", ok: 1 },
      { tool: "file.read", ok: 1 },
    ]);
  });
});
