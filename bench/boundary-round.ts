/**
 * One round of the boundary measurement, printed as JSON on stdout: a fresh workspace, a
 * fresh child, the file tools and shell commands of `file-tools-measure.ts`. Kept to the
 * few functions every checkout of the bench has (`seedWorkspace`, `toolhostPool`), so the
 * very same file runs against an older checkout and `boundary-ab.ts` can interleave the
 * two, round by round, on one machine at one time.
 *
 *   npx tsx bench/boundary-round.ts none|bwrap
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { measureFileTools, seedFileToolTree } from "./file-tools-measure.js";
import { seedWorkspace, toolhostPool } from "./toolhost-bench.js";

const mode = process.argv[2];
if (mode !== "none" && mode !== "bwrap") throw new Error("usage: boundary-round.ts none|bwrap");
const { workspaceDir } = await seedWorkspace(mode);
const dir = join(workspaceDir, "workspace/main/fbench");
seedFileToolTree(dir);
const pool = toolhostPool(workspaceDir);
const client = pool.client("main");
await client.ping();
const figures = await measureFileTools(client, dir);
await pool.stopAll();
rmSync(join(workspaceDir, ".."), { recursive: true, force: true });
process.stdout.write(`${JSON.stringify(figures)}\n`);
