/**
 * The OS half of `laoding share verify`: a shell command run by each agent's real chat
 * toolhost, in its sandbox, exactly as the model's `shell.exec` runs one. The path
 * sandbox only judges the paths a file tool is given; a shell command's arguments are
 * not paths to it (`cat ../b/notes` is just words), so only the jail and the uid keep an
 * agent's shell out of another agent's tree. Probed: the agent can create and remove a
 * file in its own private folder, and `ls` / `cat` of every other agent's folders, of a
 * few of the files apply copied there, and of their probe file fail.
 */
import type { AgentDefinition } from "../config/agents.js";
import type { RuntimeLayout } from "../config/runtime-layout.js";
import type { ToolhostClient } from "../toolhost/client/toolhost-client.js";
import type { ToolResult } from "../toolhost/protocol.js";

export type JailProbeOptions = {
  layout: RuntimeLayout;
  agents: AgentDefinition[];
  client: (agentId: string) => ToolhostClient;
  /** Files known to be in an agent's tree (the copies the plan made there), for `cat` from the other agents; a few are enough. */
  knownFiles: (agentId: string) => string[];
  /** Names the probe files (`.verify-<stamp>`), so a leftover says when it was made. */
  stamp: string;
  report: (line: string) => void;
};

/** How many of another agent's known files each agent tries to `cat`. */
const MAX_FILES_CAT = 2;

const FIX_REACH =
  "the OS sandbox does not keep agents apart: set TOOLHOST_SANDBOX=bwrap (or auto with bubblewrap installed) and let `laoding start` give each tree to its agent's uid with mode 0700 (docs/isolation.md)";

/** Problems found, each with what to do; notes (a probe the allowlist does not permit) go to `report`. */
export async function jailProblems(options: JailProbeOptions): Promise<string[]> {
  const problems: string[] = [];
  const probeFiles = new Map<string, string>();
  for (const agent of options.agents) {
    const own = options.layout.agentTrees(agent.id).privateDir;
    const probe = `${own}/.verify-${options.stamp}`;
    const touched = await shell(options.client(agent.id), workTreeOf(options, agent.id), `touch ${quote(probe)}`);
    if (touched.ok) probeFiles.set(agent.id, probe);
    else if (touched.error.code === "COMMAND_NOT_ALLOWED")
      options.report(
        `agent ${agent.id}: touch is not in ALLOWED_COMMANDS, so writing its own folder was not probed through its shell`,
      );
    else
      problems.push(
        `agent ${agent.id} cannot write its own folder ${own} from its shell (touch: ${failure(touched)}): give the folder back to the agent's uid (\`laoding start\` does it, or chown -R <agent uid> ${own}) and check that nothing mounts it read-only`,
      );
  }
  try {
    for (const agent of options.agents) {
      const cwd = workTreeOf(options, agent.id);
      const before = problems.length;
      for (const other of options.agents.filter((candidate) => candidate.id !== agent.id)) {
        const trees = options.layout.agentTrees(other.id);
        const files = [
          ...options.knownFiles(other.id).slice(0, MAX_FILES_CAT),
          ...(probeFiles.has(other.id) ? [probeFiles.get(other.id) as string] : []),
        ];
        const targets = [
          `ls ${quote(trees.privateDir)}`,
          `ls ${quote(trees.workTree)}`,
          ...files.map((file) => `cat ${quote(file)}`),
        ];
        for (const command of targets) {
          const result = await shell(options.client(agent.id), cwd, command);
          if (result.ok)
            problems.push(
              `agent ${agent.id}'s shell can reach agent ${other.id}'s tree (\`${command}\` succeeded): ${FIX_REACH}`,
            );
          else if (result.error.code === "COMMAND_NOT_ALLOWED")
            options.report(`agent ${agent.id}: \`${command.split(" ")[0]}\` is not in ALLOWED_COMMANDS; not probed`);
          else if (result.error.code !== "EXIT_NONZERO")
            problems.push(
              `agent ${agent.id}'s shell could not be probed with \`${command}\` (${failure(result)}): run verify again; if it persists, look at the toolhost's log`,
            );
        }
      }
      if (problems.length === before)
        options.report(`agent ${agent.id}: its shell writes its own folder and reaches no other agent's tree`);
    }
  } finally {
    // Each probe file is removed by its own agent, as it was made.
    for (const [agentId, probe] of probeFiles) {
      const removed = await shell(options.client(agentId), workTreeOf(options, agentId), `rm -f ${quote(probe)}`);
      if (!removed.ok)
        problems.push(
          `agent ${agentId} cannot remove its probe file ${probe} from its shell (${failure(removed)}): its own folder is not fully its own; remove the file and check the folder's owner`,
        );
    }
  }
  return problems;
}

/** Shell commands run in the agent's working tree, as the model's do (no other folder is a valid cwd). */
function workTreeOf(options: JailProbeOptions, agentId: string): string {
  return options.layout.agentTrees(agentId).workTree;
}

function shell(client: ToolhostClient, cwd: string, command: string): Promise<ToolResult> {
  return client.callTool({ name: "shell.exec", args: { command }, cwd });
}

function failure(result: Extract<ToolResult, { ok: false }>): string {
  return `${result.error.code}: ${result.error.reason}${result.output ? ` (${result.output.trim().slice(0, 200)})` : ""}`;
}

/** A word bash takes as it is, whatever the path holds (spaces, CJK, quotes). */
function quote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}
