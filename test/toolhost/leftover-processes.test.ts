/**
 * How a finished command's leftovers are told from what the toolhost still runs: by the
 * agent's uid and the process tree (sandbox/leftover-processes.ts). The real attack runs in
 * boundary-round2.test.ts; this pins the rule on a process table.
 */
import { describe, expect, it } from "vitest";
import { killLeftovers, leftoversOf } from "../../src/toolhost/sandbox/leftover-processes.js";

const AGENT = 45_123;

describe("leftovers of an agent's uid", () => {
  const table = [
    { pid: 1, ppid: 0, uid: 0 },
    { pid: 10, ppid: 1, uid: AGENT }, // the toolhost child
    { pid: 11, ppid: 10, uid: AGENT }, // a running command's launcher
    { pid: 12, ppid: 11, uid: AGENT }, // its bash
    { pid: 13, ppid: 12, uid: AGENT }, // a background job still below it
    { pid: 20, ppid: 1, uid: AGENT }, // setsid, double fork: reparented to init
    { pid: 21, ppid: 20, uid: AGENT }, // and its own child
    { pid: 30, ppid: 1, uid: 1000 }, // someone else's
  ];

  it("keeps the child and everything below it, and names every other process of the uid", () => {
    expect(leftoversOf(AGENT, 10, table)).toEqual([20, 21]);
  });

  it("never names another uid's processes", () => {
    expect(leftoversOf(1000, 10, table)).toEqual([30]);
    expect(leftoversOf(AGENT, 10, table)).not.toContain(30);
  });

  it("refuses to sweep root's uid (a child run in-process by root would otherwise sweep the host)", () => {
    expect(() => killLeftovers(0)).toThrow(/refusing to sweep uid 0/);
  });
});
