import { closeSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { openMaintenancePool } from "../../runtime/library-maintenance.js";
import { prepareToolhostLaunches } from "../../runtime/toolhost-launch.js";
import { createToolhostPool } from "../../runtime/toolhost-pool-factory.js";
import { applyShare } from "../../share/share-apply.js";
import { movesOfPlan, recordShareMoves, shareMovesFile } from "../../share/share-moves.js";
import { loadShareMapping, type LoadedMapping } from "../../share/share-mapping.js";
import { copyMaxBytes, octal, planShare, type SharePlan } from "../../share/share-plan.js";
import { readVerifyRecord, verifyRecordFile, writeVerifyRecord } from "../../share/share-record.js";
import { jailProblems } from "../../share/share-jail-probe.js";
import { applyRollback, chooseArchive, planRollback } from "../../share/share-rollback.js";
import { copyProblems, isolationProblems, legacyItemPaths } from "../../share/share-verify.js";
import { systemClock } from "../../store/clock.js";
import { fdEntry, isRefusal, pinFolder, pinPath, type WalkRefusal } from "../../workspace/descriptor-walk.js";
import { openStore, type Store } from "../../store/store.js";
import { bootstrap, type Boot } from "../bootstrap.js";
import { CLI_ENTRY, UsageError, writeLine, type CliContext, type Command } from "../cli-context.js";
import { parseFlags, WORKSPACE_FLAG } from "../parse-flags.js";

const usage = `Usage: laoding share <plan|apply|verify|cleanup> --mapping FILE [--workspace DIR]
       laoding share rollback [--archive FILE] [--apply] [--workspace DIR]

Moves a legacy shared folder (files and scripts at the share root used by all agents)
to per-agent folders, as the mapping file says (docs/isolation.md has the procedure).

  plan      list every copy it would make, every conflict, and the Go-era skills with
            what each becomes; writes nothing
  apply     back up the whole share to data/share-backups/, then copy (never move) each
            item into agents/<A>/ with its mode; a second run copies nothing
  verify    check every copy by hash and mode, and start each agent's toolhost to prove
            it sees only its own trees; the result is recorded for cleanup
  cleanup   remove the legacy items, only after a passing verify of the same mapping
  rollback  say what restoring a backup would change (the newest in data/share-backups
            unless --archive names one); with --apply, and the bot stopped, set the
            current share aside as share.migrated-<time> and restore the archive

Options:
  --mapping FILE    the mapping file (JSON, see docs/isolation.md)
  --archive FILE    rollback: the backup to restore (default: the newest)
  --apply           rollback: restore (without it, only the plan is shown)
${WORKSPACE_FLAG.help()}
  -h, --help        show this help`;

const ACTIONS = ["plan", "apply", "verify", "cleanup", "rollback"] as const;
type Action = (typeof ACTIONS)[number];

export const shareCommand: Command = {
  name: "share",
  summary: "move a legacy shared folder to per-agent folders: plan, apply (with a backup), verify, cleanup, rollback",
  usage,
  async run(context) {
    const { values, positionals } = parseFlags(
      context.args,
      {
        mapping: { type: "string" },
        ...WORKSPACE_FLAG.option,
        archive: { type: "string" },
        apply: { type: "boolean" },
      },
      usage,
      true,
    );
    if (values.help) return (writeLine(context.stdout, usage), 0);
    const [action, ...extra] = positionals;
    if (!ACTIONS.includes(action as Action))
      throw new UsageError(action ? `unknown action "${action}"` : "an action is required", usage);
    if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}"`, usage);
    if (action !== "rollback" && (values.archive !== undefined || values.apply))
      throw new UsageError("--archive and --apply belong to rollback", usage);
    if (action === "rollback") {
      if (values.mapping) throw new UsageError("rollback takes no --mapping (it restores the whole share)", usage);
      const boot = bootstrap(context, { seed: false, workspaceDir: values.workspace });
      const archive = values.archive === undefined ? undefined : resolve(context.cwd, values.archive);
      return await rollback(boot, archive, values.apply === true, (line) => writeLine(context.stdout, line));
    }
    if (!values.mapping) throw new UsageError("--mapping FILE is required", usage);
    const boot = bootstrap(context, { seed: false, workspaceDir: values.workspace });
    const loaded = loadShareMapping(
      resolve(context.cwd, values.mapping),
      boot.agents.map((agent) => agent.id),
    );
    const store = await openStore(boot.layout.databaseTarget, systemClock);
    const maintenance = openMaintenancePool({
      config: boot.loaded.config,
      layout: boot.layout,
      agents: boot.agents,
      store,
      logger: boot.logger,
      cliEntry: CLI_ENTRY,
      onWarning: (warning) => writeLine(context.stderr, `warning: ${warning}`),
    });
    try {
      const plan = await planShare(
        boot.layout,
        loaded,
        maintenance,
        copyMaxBytes(boot.loaded.config.TOOLHOST_MAX_FRAME_BYTES),
      );
      const out = (line: string) => writeLine(context.stdout, line);
      if (action === "plan") return printPlan(plan, loaded, out);
      if (action === "apply") {
        const now = new Date(systemClock.now());
        const result = await applyShare(plan, {
          maintenance,
          backupsDir: join(boot.layout.dataDir, "share-backups"),
          now,
          report: out,
        });
        out(`done: ${result.copied} copied, ${result.unchanged} already there. Backup: ${result.backup}`);
        const recorded = recordShareMoves(
          shareMovesFile(boot.layout.dataDir),
          movesOfPlan(boot.layout, loaded.mapping, plan),
          { now, backup: result.backup },
        );
        out(
          `moves recorded for the agents' prompts (shown for 30 days): ${recorded.length} new, in ${shareMovesFile(boot.layout.dataDir)}`,
        );
        out(`next: laoding share verify --mapping ${loaded.path}`);
        return 0;
      }
      if (action === "verify") return await verify(context, boot, store, plan, loaded, out);
      return cleanup(boot, plan, loaded, out);
    } finally {
      await maintenance.close();
      await store.close();
    }
  },
};

function printPlan(plan: SharePlan, loaded: LoadedMapping, out: (line: string) => void): number {
  out(`share ${plan.shareDir}; mapping ${loaded.path} (sha256 ${loaded.hash.slice(0, 12)})`);
  out(`copies (${plan.copies.length}):`);
  for (const copy of plan.copies) {
    const label = copy.state === "copy" ? "copy     " : copy.state === "same" ? "unchanged" : "CONFLICT ";
    out(
      `  ${label} ${copy.source} -> ${copy.dest} (agent ${copy.agentId}, ${copy.sizeBytes} bytes, mode ${octal(copy.mode)})${copy.reason ? `: ${copy.reason}` : ""}`,
    );
  }
  if (plan.goSkills.length > 0) {
    out(`Go-era skills (${plan.goSkills.length}):`);
    for (const skill of plan.goSkills) out(`  ${skill.folder} -> ${skill.becomes}: ${skill.action}`);
  }
  if (plan.unmapped.length > 0) {
    out(`legacy items the mapping does not name (they stay; cleanup leaves them):`);
    for (const item of plan.unmapped) out(`  ${item}`);
  }
  if (plan.conflicts.length > 0) {
    out(`conflicts (${plan.conflicts.length}); apply refuses until they are resolved:`);
    for (const conflict of plan.conflicts) out(`  - ${conflict}`);
  }
  const pending = plan.copies.filter((copy) => copy.state === "copy").length;
  out(
    `plan only: nothing was written. ${pending} file(s) to copy.${plan.conflicts.length === 0 ? ` Next: laoding share apply --mapping ${loaded.path}` : ""}`,
  );
  return 0;
}

async function verify(
  context: CliContext,
  boot: Boot,
  store: Store,
  plan: SharePlan,
  loaded: LoadedMapping,
  out: (line: string) => void,
): Promise<number> {
  const problems = copyProblems(plan);
  const differing = plan.copies.filter((copy) => copy.state !== "same").length;
  out(
    `copies: ${plan.copies.length - differing} of ${plan.copies.length} identical by hash and mode${plan.refused.length > 0 ? `; ${plan.refused.length} source(s) refused (a link on the way)` : ""}`,
  );
  // The agents' real chat toolhosts, launched exactly as the bot launches them (the library overrides read first: planning is synchronous).
  const libraryOverrides = new Map<string, boolean | undefined>();
  for (const agent of boot.agents)
    libraryOverrides.set(agent.id, await store.agentSettings.experienceLibrary(agent.id));
  const launches = prepareToolhostLaunches({
    config: boot.loaded.config,
    layout: boot.layout,
    agents: boot.agents,
    cliEntry: CLI_ENTRY,
    libraryEnabled: (agent) => libraryOverrides.get(agent.id) ?? agent.experienceLibrary,
  });
  for (const warning of launches.warnings) writeLine(context.stderr, `warning: ${warning}`);
  const pool = createToolhostPool({ config: boot.loaded.config, launches, store, logger: boot.logger });
  try {
    problems.push(
      ...(await isolationProblems({
        layout: boot.layout,
        agents: boot.agents,
        legacyItems: legacyItemPaths(plan.shareDir, loaded.mapping.items),
        client: (agentId) => pool.client(agentId),
        report: out,
      })),
    );
    // The same toolhosts' shells, through the OS sandbox the path checks above do not cover.
    problems.push(
      ...(await jailProblems({
        layout: boot.layout,
        agents: boot.agents,
        client: (agentId) => pool.client(agentId),
        knownFiles: (agentId) =>
          plan.copies.filter((copy) => copy.agentId === agentId && copy.state === "same").map((copy) => copy.dest),
        stamp: new Date(systemClock.now()).toISOString().replace(/[:.]/g, "-"),
        report: out,
      })),
    );
  } finally {
    await pool.stopAll();
  }
  const passed = problems.length === 0;
  writeVerifyRecord(verifyRecordFile(boot.layout.dataDir), {
    mappingHash: loaded.hash,
    mappingPath: loaded.path,
    passed,
    verifiedAt: new Date(systemClock.now()).toISOString(),
    copies: plan.copies.length,
    problems,
  });
  for (const problem of problems) out(`  - ${problem}`);
  out(
    passed
      ? `verify passed (recorded). Let the bot run for a while, then: laoding share cleanup --mapping ${loaded.path}`
      : `verify FAILED: ${problems.length} problem(s) (recorded; cleanup refuses until verify passes)`,
  );
  return passed ? 0 : 1;
}

/**
 * Removes one legacy item as root by its name inside its folder, that folder reached
 * from the share root one name at a time: a folder on the way swapped for a link since
 * verify stops the cleanup instead of leading rm elsewhere. rm itself never follows links
 * (a link item is removed, never what it points to).
 */
function removeLegacyItem(shareDir: string, itemPath: string): void {
  const segments = itemPath.split("/").filter((segment) => segment.length > 0 && segment !== ".");
  const name = segments.pop() as string;
  const root = pinPath(shareDir, true);
  if (!root) throw new Error(`cleanup stopped: the share ${shareDir} is gone`);
  let parent: number | WalkRefusal;
  try {
    parent = pinFolder(root.fd, segments);
  } finally {
    closeSync(root.fd);
  }
  if (isRefusal(parent))
    throw new Error(
      `cleanup stopped at ${itemPath}: ${parent.at} is ${parent.problem === "link" ? "a link now" : parent.problem}; nothing more was removed. Run verify again`,
    );
  try {
    rmSync(fdEntry(parent, name), { recursive: true, force: true });
  } finally {
    closeSync(parent);
  }
}

function cleanup(boot: Boot, plan: SharePlan, loaded: LoadedMapping, out: (line: string) => void): number {
  const record = readVerifyRecord(verifyRecordFile(boot.layout.dataDir));
  if (!record || !record.passed || record.mappingHash !== loaded.hash) {
    const why = !record
      ? "no verify was recorded"
      : !record.passed
        ? `the last verify (${record.verifiedAt}) failed`
        : `the last passing verify was for another mapping (${record.mappingPath})`;
    throw new Error(
      `cleanup refused: ${why}. Run laoding share verify --mapping ${loaded.path} first; nothing was removed`,
    );
  }
  // The copies are checked again: a copy changed since verify must not lose its original.
  const problems = copyProblems(plan);
  if (problems.length > 0)
    throw new Error(
      `cleanup refused: copies changed since verify:\n  - ${problems.join("\n  - ")}\nRun verify again; nothing was removed`,
    );
  for (const item of loaded.mapping.items) {
    removeLegacyItem(plan.shareDir, item.path);
    out(`removed ${join(plan.shareDir, item.path)}`);
  }
  out(
    `cleanup done. The backup archives in ${join(boot.layout.dataDir, "share-backups")} hold the originals (docs/isolation.md: rollback)`,
  );
  return 0;
}

/** How many differences the rollback plan lists before "and N more". */
const MAX_LISTED_DIFFERENCES = 20;

async function rollback(
  boot: Boot,
  named: string | undefined,
  apply: boolean,
  out: (line: string) => void,
): Promise<number> {
  const { shareDir, dataDir } = boot.layout;
  const archive = chooseArchive(join(dataDir, "share-backups"), named);
  if (apply) {
    const result = await applyRollback({ archive, shareDir, dataDir, now: new Date(systemClock.now()) });
    if (!result.changed) {
      out(`${shareDir} already matches ${archive}: nothing was changed`);
      return 0;
    }
    out(`restored ${shareDir} from ${archive}; every entry checked against the archive by hash and mode`);
    out(`the share as it was is in ${result.setAside} (never deleted; remove it yourself once you are sure)`);
    if (result.forgottenMoves > 0)
      out(`the agents' prompts no longer mention the ${result.forgottenMoves} move(s) this undid`);
    out("next: laoding start (it gives each agent's trees back to its uid with their modes)");
    return 0;
  }
  const plan = await planRollback(archive, shareDir);
  out(`archive ${archive}: ${plan.entries} entries, restores ${shareDir}`);
  if (plan.differences.length === 0) {
    out("the share already matches the archive: a rollback would change nothing");
    return 0;
  }
  out(`what exists now that differs (${plan.differences.length}):`);
  for (const difference of plan.differences.slice(0, MAX_LISTED_DIFFERENCES))
    out(`  ${difference.change.padEnd(19)} ${join(shareDir, difference.path)}`);
  if (plan.differences.length > MAX_LISTED_DIFFERENCES)
    out(`  and ${plan.differences.length - MAX_LISTED_DIFFERENCES} more`);
  for (const [agentId, count] of plan.agentCopies)
    out(
      `agent ${agentId}: ${count} entr${count === 1 ? "y" : "ies"} under ${boot.layout.agentTrees(agentId).privateDir} not in the archive (copies apply made, or written since) leave the share with it`,
    );
  out(
    `with --apply the current share is moved aside as ${shareDir}.migrated-<time> (never deleted), then the archive is restored; stop the bot first`,
  );
  out(`plan only: nothing was changed. To restore: laoding share rollback --archive ${archive} --apply`);
  return 0;
}
