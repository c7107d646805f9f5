import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/config/config-error.js";
import { parseAgents, personaFile } from "../../src/config/agents.js";
import { tempDir } from "../helpers/temp-dir.js";

function errorOf(run: () => unknown): ConfigError {
  try {
    run();
  } catch (error) {
    return error as ConfigError;
  }
  throw new Error("no error was thrown");
}

describe("agents file", () => {
  it("applies defaults", () => {
    expect(parseAgents('{"agents":[{"id":"main","name":"Main"}]}', "agents.json")).toEqual([
      { id: "main", name: "Main", network: false, mcpServers: {}, experienceLibrary: true, writableDirs: [] },
    ]);
  });

  it.each([
    ["Main", /agents\[0\] \(id "Main"\): `id`: must match/],
    ["-x", /agents\[0\] \(id "-x"\): `id`: must match/],
    ["a".repeat(65), /`id`: must match/],
    ["../etc", /`id`: must match/],
  ])("refuses the bad id %s naming the entry", (id, pattern) => {
    expect(() => parseAgents(JSON.stringify({ agents: [{ id, name: "x" }] }), "agents.json")).toThrow(pattern);
  });

  it("refuses duplicates naming the second entry", () => {
    const text = JSON.stringify({
      agents: [
        { id: "a", name: "A" },
        { id: "b", name: "B" },
        { id: "a", name: "A2" },
      ],
    });
    expect(() => parseAgents(text, "agents.json")).toThrow(/agents\[2\] \(id "a"\): duplicate id "a"/);
  });

  it("refuses malformed JSON, an empty list and unknown fields", () => {
    expect(() => parseAgents("{ agents: [", "/x/agents.json")).toThrow(/^\/x\/agents.json:1:3: not valid JSON/);
    expect(() => parseAgents('{"agents":[]}', "agents.json")).toThrow(/lists no agents/);
    expect(() => parseAgents('{"agents":[{"id":"a","name":"A","netwrk":true}]}', "agents.json")).toThrow(
      /agents\[0\] \(id "a"\).*netwrk/,
    );
  });

  it("says a field is missing, names a typo'd field with the allowed ones, and hints about what is wrong", () => {
    const missing = errorOf(() => parseAgents('{"agents":[{"id":"a"}]}', "agents.json"));
    expect(missing.message).toMatch(/^agents.json:1:12: agents\[0\] \(id "a"\): `name` is missing\./);
    const typo = errorOf(() => parseAgents('{"agents":[{"id":"a","nmae":"A","name":"A"}]}', "agents.json"));
    expect(typo.message).toMatch(
      /unknown field `nmae` \(allowed: id, name, description, persona, network, mcpServers, experienceLibrary, writableDirs, telegram, feishu\)/,
    );
    expect(typo.hint).not.toMatch(/ids? never change/);
    expect(errorOf(() => parseAgents('{"agents":[{"id":"A","name":"A"}]}', "agents.json")).hint).toMatch(/Fix the id/);
  });

  it("finds every entry's problems at once, each at its file:line:column, as findings", () => {
    const text =
      '{\n  "agents": [\n    { "id": "main", "name": "Main",\n      "nmae": 1 },\n    { "id": "ok", "name": "Ok" },\n    { "id": "Bad", "name": "B" },\n    { "id": "ok", "name": "Again" }\n  ]\n}\n';
    const error = errorOf(() => parseAgents(text, "configs/agents.json"));
    expect(error.findings).toEqual([
      expect.stringMatching(/^configs\/agents.json:4:7: agents\[0\] \(id "main"\): unknown field `nmae`/),
      expect.stringMatching(/^configs\/agents.json:6:7: agents\[2\] \(id "Bad"\): `id`: must match/),
      'configs/agents.json:7:7: agents[3] (id "ok"): duplicate id "ok"; every agent needs its own id',
    ]);
    expect(error.message).toMatch(/^configs\/agents.json: 3 problems:\n {2}- configs\/agents.json:4:7: /);
  });

  it("keeps the persona inside bot_context/: no .., no absolute path, no link out", () => {
    for (const persona of ["../../../../etc/passwd", "/etc/passwd", "x/../../y.md"]) {
      expect(() => parseAgents(JSON.stringify({ agents: [{ id: "a", name: "A", persona }] }), "agents.json")).toThrow(
        /`persona`: must be a file inside bot_context\//,
      );
    }
    const botContext = join(tempDir(), "bot_context");
    mkdirSync(join(botContext, "team"), { recursive: true });
    writeFileSync(join(botContext, "team", "ops.md"), "You are Ops.");
    symlinkSync("/etc/passwd", join(botContext, "sneaky.md"));
    const [inside, linked, missing] = parseAgents(
      JSON.stringify({
        agents: [
          { id: "a", name: "A", persona: "team/ops.md" },
          { id: "b", name: "B", persona: "sneaky.md" },
          { id: "c", name: "C", persona: "nope.md" },
        ],
      }),
      "agents.json",
    );
    expect(personaFile(botContext, inside!)).toBe(join(botContext, "team", "ops.md"));
    expect(() => personaFile(botContext, linked!)).toThrow(
      /agent "b": persona "sneaky.md" resolves to \/etc\/passwd, outside/,
    );
    expect(personaFile(botContext, missing!)).toBeUndefined();
  });
});
