import { describe, expect, it } from "vitest";
import { parseAgents } from "../../src/config/agents.js";

describe("agents file", () => {
  it("applies defaults", () => {
    expect(parseAgents('{"agents":[{"id":"main","name":"Main"}]}', "agents.json")).toEqual([
      { id: "main", name: "Main", network: false, experienceLibrary: true, writableDirs: [] },
    ]);
  });

  it.each([
    ["Main", /agents\[0\] \(id "Main"\): id must match/],
    ["-x", /agents\[0\] \(id "-x"\): id must match/],
    ["a".repeat(65), /id must match/],
    ["../etc", /id must match/],
  ])("refuses the bad id %s naming the entry", (id, pattern) => {
    expect(() => parseAgents(JSON.stringify({ agents: [{ id, name: "x" }] }), "agents.json")).toThrow(pattern);
  });

  it("refuses duplicates naming the second entry", () => {
    const text = JSON.stringify({ agents: [{ id: "a", name: "A" }, { id: "b", name: "B" }, { id: "a", name: "A2" }] });
    expect(() => parseAgents(text, "agents.json")).toThrow(/agents\[2\] \(id "a"\): duplicate id "a"/);
  });

  it("refuses malformed JSON, an empty list and unknown fields", () => {
    expect(() => parseAgents("{ agents: [", "/x/agents.json")).toThrow(/\/x\/agents.json is not valid JSON/);
    expect(() => parseAgents('{"agents":[]}', "agents.json")).toThrow(/lists no agents/);
    expect(() => parseAgents('{"agents":[{"id":"a","name":"A","netwrk":true}]}', "agents.json")).toThrow(/agents\[0\] \(id "a"\).*netwrk/);
  });
});
