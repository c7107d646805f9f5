/**
 * The audit rule in a real chat turn (fake model over HTTP, real orchestrator, real
 * toolhost child, real SQLite): a tool result reaches the model only once its intent row
 * is committed (written ahead, issue 29), and a row the database refuses means a call
 * with effects is never sent: the model is told it was not run, and the row (with that
 * outcome) is written later.
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
  it("a write whose row the database refuses is never run, the model is told so; the row is written with a later call", async () => {
    const bot = await startTestBot();
    const { sql } = bot.runtime.store;
    await sql.exec(REFUSE_AUDIT[sql.engine]);
    bot.fake.enqueue(
      routeTo([], "write-notes"),
      { toolCalls: [{ name: "file_write", arguments: { path: "notes.txt", content: "remember the milk\n" } }] },
      { text: "I could not save the note." },
    );
    expect(await bot.send("save a note: remember the milk")).toBe("I could not save the note.");
    const observation = bot.fake.requests[2]?.messages.at(-1)?.content ?? "";
    expect(observation).toMatch(
      /^ERROR_CODE=INTERNAL; TOOL=file\.write; REASON=its audit record could not be stored \(database or disk is full\), so it was not run: nothing was done/,
    );
    expect(await sql.get("SELECT count(*) AS n FROM tool_calls")).toEqual({ n: 0 });

    await sql.exec(ALLOW_AUDIT[sql.engine]);
    bot.fake.enqueue(
      routeTo([], "read-notes"),
      { toolCalls: [{ name: "file_read", arguments: { path: "notes.txt" } }] },
      { text: "There is no note." },
    );
    expect(await bot.send("what does my note say?")).toBe("There is no note.");
    // The write never reached the child: there is nothing to read.
    expect(bot.fake.requests[5]?.messages.at(-1)?.content).toMatch(/^ERROR_CODE=PATH_NOT_FOUND/);
    // The read's result reached the model, so its row (and the refused write's, tried again first) is in the file.
    expect(await sql.all("SELECT tool, ok, error_code AS code FROM tool_calls ORDER BY id")).toEqual([
      { tool: "file.write", ok: 0, code: "AUDIT_REFUSED" },
      { tool: "file.read", ok: 0, code: "PATH_NOT_FOUND" },
    ]);
  });
});
