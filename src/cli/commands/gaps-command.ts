import { formatClusters } from "../../agent/commands/gap-commands.js";
import { gapClassWords, gapReasonWords } from "../../agent/gaps/classify-gap.js";
import { agentGapReport } from "../../agent/gaps/gap-report.js";
import { systemClock } from "../../store/clock.js";
import { openStore, type Store } from "../../store/store.js";
import { describeToolCall } from "../../store/tool-calls-store.js";
import { bootstrap } from "../bootstrap.js";
import { UsageError, writeLine, type Command } from "../cli-context.js";
import { parseFlags, WORKSPACE_FLAG } from "../parse-flags.js";

const usage = `Usage: laoding gaps [--agent ID] [--since HOURS] [--json] [--workspace DIR]
       laoding gaps show <id> [--workspace DIR]

  gaps        the top capability-gap clusters per agent: intent, reason, class, count,
              sessions, last seen, and the draft or linked skill; then the environment
              problems by cause (model unavailable, rate limited, ...): count, first and
              last seen, the last error (--json: "environment")
  gaps show   one gap with its chain: trace -> message -> tool calls -> gaps

Options:
  --agent ID        only this agent (default: all)
  --since HOURS     lookback window (default GAP_CLUSTER_LOOKBACK_HOURS)
  --json            machine-readable output
${WORKSPACE_FLAG.help()}
  -h, --help        show this help`;

export const gapsCommand: Command = {
  name: "gaps",
  summary: "show capability-gap clusters and environment problems, or one gap's chain from trace to tool calls",
  usage,
  async run(context) {
    const { values, positionals } = parseFlags(
      context.args,
      { agent: { type: "string" }, since: { type: "string" }, json: { type: "boolean" }, ...WORKSPACE_FLAG.option },
      usage,
      true,
    );
    if (values.help) return (writeLine(context.stdout, usage), 0);
    const boot = bootstrap(context, {
      seed: false,
      workspaceDir: values.workspace,
      logRouting: { interactive: () => false },
    });
    const hours = values.since === undefined ? boot.loaded.config.GAP_CLUSTER_LOOKBACK_HOURS : Number(values.since);
    if (!Number.isFinite(hours) || hours <= 0)
      throw new UsageError(`--since must be a positive number of hours, not "${values.since}"`, usage);
    const store = await openStore(boot.layout.databaseTarget, systemClock);
    try {
      if (positionals[0] === "show") {
        const id = Number(positionals[1]);
        if (!Number.isInteger(id) || id <= 0) throw new UsageError("gaps show needs a gap id (a whole number)", usage);
        return await showGap(store, id, values.json === true, context.stdout);
      }
      if (positionals.length > 0) throw new UsageError(`unknown action "${positionals[0]}"`, usage);
      const agents = boot.agents.filter((agent) => !values.agent || agent.id === values.agent);
      if (agents.length === 0) throw new UsageError(`no agent "${values.agent}"`, usage);
      const now = systemClock.now();
      const since = now - hours * 3_600_000;
      if (values.json) {
        const result: Awaited<ReturnType<typeof agentGapReport>>[] = [];
        for (const agent of agents) result.push(await agentGapReport(store.clusters, agent.id, since));
        writeLine(context.stdout, JSON.stringify(result, null, 2));
        return 0;
      }
      for (const agent of agents) {
        writeLine(context.stdout, `agent ${agent.id}`);
        writeLine(
          context.stdout,
          (
            await formatClusters(store.clusters, agent.id, since, now, hours, "en", { detailed: true, limit: 50 })
          ).replace(/^(?=.)/gm, "  "),
        );
      }
      return 0;
    } finally {
      await store.close();
    }
  },
};

async function showGap(store: Store, id: number, json: boolean, out: NodeJS.WritableStream): Promise<number> {
  const gap = await store.gaps.get(id);
  if (!gap) throw new Error(`no gap with id ${id}; list them with \`laoding gaps\``);
  const messages = await store.messages.byTrace(gap.traceId);
  const toolCalls = await store.toolCalls.byTrace(gap.traceId);
  const gaps = await store.gaps.byTrace(gap.traceId);
  if (json) {
    writeLine(out, JSON.stringify({ gap, messages, toolCalls, gaps }, null, 2));
    return 0;
  }
  const time = (ms: number) => new Date(ms).toISOString().replace("T", " ").slice(0, 19);
  // People read the reasons in words; --json keeps the stored codes.
  writeLine(
    out,
    `gap ${gap.id} · ${gap.intentKey} · ${gapReasonWords("en", gap.reason)} · ${gapClassWords("en", gap.gapClass)} · agent ${gap.agentId} · ${time(gap.createdAt)}`,
  );
  writeLine(out, `trace ${gap.traceId}${gap.sessionId !== null ? ` · session ${gap.sessionId}` : ""}`);
  writeLine(out, "messages:");
  for (const message of messages) {
    const calls = message.toolCalls
      ? ` calls ${(JSON.parse(message.toolCalls) as { name: string; arguments: string }[]).map((call) => `${call.name}(${call.arguments.slice(0, 80)})`).join(", ")}`
      : "";
    writeLine(
      out,
      `  ${time(message.createdAt)} ${message.role}/${message.kind}: ${message.content.replace(/\s+/g, " ").slice(0, 160)}${calls}`,
    );
  }
  writeLine(out, "tool calls:");
  // A call's row is written before it runs: one without an outcome is in progress, or its process stopped (issue 29).
  for (const call of toolCalls)
    writeLine(
      out,
      `  ${time(call.createdAt)} ${call.tool} ${describeToolCall(call)} (args ${call.args === null ? call.argsDigest : call.args.slice(0, 120)})`,
    );
  if (toolCalls.length === 0) writeLine(out, "  (none)");
  writeLine(out, "gaps of this trace:");
  for (const other of gaps) {
    writeLine(
      out,
      `  ${other.id === gap.id ? "*" : " "} ${other.id} ${gapReasonWords("en", other.reason)} · ${gapClassWords("en", other.gapClass)}${other.tool ? ` ${other.tool}` : ""}${other.errorCode ? ` ${other.errorCode}` : ""}${other.detail ? `: ${other.detail.slice(0, 160)}` : ""}`,
    );
  }
  return 0;
}
