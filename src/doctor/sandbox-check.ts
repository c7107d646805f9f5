/**
 * Each agent's toolhost launch, planned and probed exactly as `laoding start` does
 * (prepareToolhostLaunches, one agent at a time so every agent gets its own line): the
 * probe runs the agent's real launch chain (bubblewrap, the agent's uid) with a tiny
 * shell script that checks the uid can enter and write its folders.
 *
 * As root, planning first gives the agents' folders the owners and modes start-up gives
 * them (sandbox/agent-trees.ts); the doctor says so on the line. It never makes cgroups:
 * those are per running bot, and a doctor's would outlive it.
 */
import type { AgentDefinition } from "../config/agents.js";
import type { Config } from "../config/load-config.js";
import type { RuntimeLayout } from "../config/runtime-layout.js";
import { SandboxUnavailableError, type LaunchSetup, type ToolhostLaunches } from "../runtime/toolhost-launch.js";
import { failed, passed, type CheckResult } from "./check-result.js";

export type SandboxCheckOptions = {
  config: Config;
  layout: RuntimeLayout;
  agents: AgentDefinition[];
  cliEntry: string;
  isRoot: boolean;
  /** As `laoding start` would run: only the operator at a terminal (the console channel). */
  localOperatorOnly: boolean;
  prepare: (setup: LaunchSetup) => ToolhostLaunches;
};

/** The warning prepareToolhostLaunches gives when it is told there are no cgroups, as the doctor tells it. */
const NO_CGROUPS_WARNING = "no memory and pids cgroups are available";

export function checkSandbox(options: SandboxCheckOptions): CheckResult[] {
  const setting = options.config.TOOLHOST_SANDBOX;
  return options.agents.map((agent) => {
    const id = `sandbox:${agent.id}`;
    const title = `sandbox of agent ${agent.id} (TOOLHOST_SANDBOX=${setting})`;
    let launches: ToolhostLaunches;
    try {
      launches = options.prepare({
        config: options.config,
        layout: options.layout,
        agents: [agent],
        cliEntry: options.cliEntry,
        isRoot: options.isRoot,
        localOperatorOnly: options.localOperatorOnly,
        cgroups: null,
      });
    } catch (error) {
      if (!(error instanceof SandboxUnavailableError)) throw error;
      return failed(id, title, error.problem, error.fix);
    }
    const launch = launches.agents.get(agent.id);
    const warnings = launches.warnings.filter((warning) => !warning.startsWith(NO_CGROUPS_WARNING));
    const how =
      launch === undefined
        ? "planned"
        : `${launch.mode === "bwrap" ? "commands in bubblewrap" : launch.jail ? "in its own namespaces, commands without bubblewrap" : "without a jail"}${launch.uid !== undefined ? `, as uid ${launch.uid}` : ""}`;
    // auto (or bwrap) asked for bubblewrap; ending up without it works, but weaker than asked.
    if ((setting === "auto" || setting === "bwrap") && launch?.mode === "none") {
      return failed(
        id,
        title,
        `bubblewrap is not usable, so agent ${agent.id} runs ${how}: ${warnings.join("; ")}`,
        "Install bubblewrap (apt-get install bubblewrap) and allow user namespaces (sysctl kernel.unprivileged_userns_clone=1), or set TOOLHOST_SANDBOX=none to accept running without it (docs/isolation.md)",
      );
    }
    const notes = [
      ...(options.isRoot ? ["as root, its folders were given the owners and modes `laoding start` gives them"] : []),
      ...warnings,
    ];
    return passed(id, `${title}: ${how}`, notes.length > 0 ? notes.join("; ") : undefined);
  });
}
