import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SkillCatalog, type SkillSnapshot } from "../../knowledge/skill-catalog.js";
import { RELOAD_MARKER } from "../../knowledge/skill-watcher.js";
import { runningBotPid } from "../../runtime/bot-pid-file.js";
import { bootstrap } from "../bootstrap.js";
import { UsageError, writeLine, type Command } from "../cli-context.js";
import { parseFlags, WORKSPACE_FLAG } from "../parse-flags.js";

const usage = `Usage: laoding skills <list|validate|reload> [--agent ID] [--workspace DIR] [--json]

  list       the skills each agent can be routed to: name, status, origin, source
  validate   check every SKILL.md; exits 1 when any is invalid, naming file and problem
  reload     make a running bot reload its skills now (it watches the skills folders),
             and show what it will load

Options:
  --agent ID        only this agent (default: all)
${WORKSPACE_FLAG.help()}
  --json            machine-readable output
  -h, --help        show this help`;

export const skillsCommand: Command = {
  name: "skills",
  summary: "list or validate each agent's skills; `skills reload` makes a running bot reload them",
  usage,
  async run(context) {
    const { values, positionals } = parseFlags(
      context.args,
      { agent: { type: "string" }, ...WORKSPACE_FLAG.option, json: { type: "boolean" } },
      usage,
      true,
    );
    if (values.help) return (writeLine(context.stdout, usage), 0);
    const action = positionals[0];
    if (action !== "list" && action !== "validate" && action !== "reload")
      throw new UsageError(action ? `unknown action "${action}"` : "an action is required", usage);
    const boot = bootstrap(context, {
      seed: false,
      workspaceDir: values.workspace,
      logRouting: { interactive: () => false },
    });
    if (action === "reload") {
      // The running bot watches the skills folders: touching the marker triggers its reload.
      mkdirSync(boot.layout.baseSkillsDir, { recursive: true });
      writeFileSync(join(boot.layout.baseSkillsDir, RELOAD_MARKER), `${new Date().toISOString()}\n`);
      const pid = runningBotPid(boot.layout.dataDir);
      writeLine(
        context.stdout,
        pid === undefined
          ? "no bot is running in this workspace: nothing to reload; the skills below load when it starts"
          : `asked the running bot (pid ${pid}) to reload (touched ${join(boot.layout.baseSkillsDir, RELOAD_MARKER)})`,
      );
    }
    const agents = boot.agents.filter((agent) => !values.agent || agent.id === values.agent);
    if (agents.length === 0) throw new UsageError(`no agent "${values.agent}"`, usage);
    const quiet = boot.logger.child({});
    quiet.level = "silent";
    const results = agents.map((agent) => {
      const catalog = new SkillCatalog(
        [
          { dir: boot.layout.baseSkillsDir, source: "base" },
          { dir: boot.layout.agentTrees(agent.id).skillsDir, source: "agent" },
        ],
        quiet,
      );
      return { agent: agent.id, snapshot: catalog.snapshot };
    });
    if (values.json) {
      writeLine(
        context.stdout,
        JSON.stringify(
          results.map(({ agent, snapshot }) => ({
            agent,
            skills: snapshot.skills.map((skill) => ({
              name: skill.name,
              status: skill.status,
              origin: skill.origin ?? null,
              source: skill.source,
              description: skill.description,
              path: skill.path,
            })),
            problems: snapshot.problems,
            goEra: snapshot.goEra,
          })),
          null,
          2,
        ),
      );
    } else {
      for (const { agent, snapshot } of results) {
        writeLine(
          context.stdout,
          `agent ${agent}: ${snapshot.skills.length} skills${snapshot.problems.length > 0 ? `, ${snapshot.problems.length} invalid` : ""}`,
        );
        if (action !== "validate") {
          for (const skill of snapshot.skills) {
            writeLine(
              context.stdout,
              `  ${skill.name.padEnd(28)} ${skill.status.padEnd(10)} ${(skill.origin ?? "-").padEnd(9)} ${skill.source.padEnd(5)} ${skill.description.slice(0, 70)}`,
            );
          }
        }
        for (const problem of snapshot.problems)
          writeLine(context.stdout, `  INVALID ${problem.path}: ${problem.reason}`);
        for (const entry of snapshot.goEra) writeLine(context.stdout, goEraLine(entry));
      }
    }
    const invalid = results.reduce((count, result) => count + result.snapshot.problems.length, 0);
    if (action === "validate")
      writeLine(
        context.stdout,
        invalid === 0 ? "all skills are valid" : `${invalid} invalid skill file(s); they are skipped until fixed`,
      );
    return action === "validate" && invalid > 0 ? 1 : 0;
  },
};

/** One Go-era skill as `laoding skills list` says it: skipped, loaded without frontmatter (a warning), or renamed. */
function goEraLine(entry: SkillSnapshot["goEra"][number]): string {
  if (entry.skippedFor)
    return `  SKIPPED ${entry.path}: Go-era name "${entry.folder}" becomes ${entry.name}, which ${entry.skippedFor} already is`;
  if (entry.descriptionFrom)
    return `  WARNING ${entry.path}: no frontmatter; loaded as ${entry.name}, description from its ${entry.descriptionFrom} (laoding import go adds frontmatter)`;
  return `  note ${entry.path}: Go-era name "${entry.folder}" loaded as ${entry.name} (folder left as it is)`;
}
