/** Operator commands of the gap loop: /capability_gaps (capability gaps, then environment problems) and /reload_skills. */
import { relative } from "node:path";
import type { SkillCatalog, SkillChanges } from "../../knowledge/skill-catalog.js";
import type { ClusterStats, EnvironmentClusterReport, GapClustersStore } from "../../store/gap-clusters-store.js";
import { gapCauseWords, gapClassWords, gapReasonWords } from "../gaps/classify-gap.js";
import { text, type Locale } from "../texts.js";
import type { ChatCommand } from "./chat-commands.js";

export const GAP_LIST_LIMIT = 10;

export function gapCommands(options: {
  clusters: GapClustersStore;
  catalog: (agentId: string) => SkillCatalog;
  lookbackHours: number;
  sinceMs: () => number;
  now: () => number;
  workspaceDir: string;
  /** Told after /reload_skills reloaded an agent's catalog (the other replicas reload too). */
  afterReload?: (agentId: string) => void;
}): ChatCommand[] {
  return [
    {
      name: "capability_gaps",
      operatorOnly: true,
      run: ({ message, locale }) =>
        formatClusters(
          options.clusters,
          message.agentId,
          options.sinceMs(),
          options.now(),
          options.lookbackHours,
          locale,
        ),
    },
    {
      name: "reload_skills",
      operatorOnly: true,
      run: ({ message, locale }) => {
        const catalog = options.catalog(message.agentId);
        const changes = catalog.reload();
        options.afterReload?.(message.agentId);
        return formatReload(
          changes,
          catalog.snapshot.version,
          catalog.snapshot.skills.length,
          locale,
          options.workspaceDir,
        );
      },
    },
  ];
}

/**
 * The top capability clusters in the compact chat format, then the environment problems
 * by cause (counts and last seen, never the user's words). `detailed` (the CLI) adds
 * distinct users, first seen and up to three sample texts per capability cluster, and
 * first seen and the last error per environment cause.
 */
export async function formatClusters(
  clusters: GapClustersStore,
  agentId: string,
  sinceMs: number,
  now: number,
  hours: number,
  locale: Locale,
  options: { detailed?: boolean; limit?: number } = {},
): Promise<string> {
  const top = await clusters.top(agentId, sinceMs, options.limit ?? GAP_LIST_LIMIT);
  const environment = await clusters.environment(agentId, sinceMs);
  const sections = [
    top.length === 0
      ? text(locale, "gapsNone", { hours })
      : await capabilityLines(clusters, top, { agentId, sinceMs, now, hours, locale, ...options }),
  ];
  if (environment.length > 0) sections.push(environmentLines(environment, { now, hours, locale, ...options }));
  return sections.join("\n\n");
}

type ListContext = { now: number; hours: number; locale: Locale; detailed?: boolean };

async function capabilityLines(
  clusters: GapClustersStore,
  top: ClusterStats[],
  context: ListContext & { agentId: string; sinceMs: number },
): Promise<string> {
  const { now, hours, locale } = context;
  const drafts = new Map((await clusters.drafts(context.agentId)).map((draft) => [draft.intentKey, draft]));
  const lines: string[] = [];
  for (const [index, cluster] of top.entries()) {
    const draft = drafts.get(cluster.intentKey);
    const state =
      draft?.status === "drafted"
        ? text(locale, "gapsDrafted", { skill: draft.skillName ?? "?" })
        : draft?.status === "linked"
          ? text(locale, "gapsLinked", { skill: draft.skillName ?? "?" })
          : text(locale, "gapsNoDraft");
    const line = text(locale, "gapsLine", {
      index: index + 1,
      intent: cluster.intentKey,
      reason: gapReasonWords(locale, cluster.reason),
      class: gapClassWords(locale, cluster.gapClass),
      count: cluster.count,
      sessions:
        cluster.sessions === 1
          ? text(locale, "gapsSession")
          : text(locale, "gapsSessions", { count: cluster.sessions }),
      last: ago(now - cluster.lastSeen, locale),
      draft: state,
    });
    if (!context.detailed) {
      lines.push(line);
      continue;
    }
    const samples = (await clusters.samples(cluster, context.sinceMs, 3)).flatMap((sample) =>
      sample.userText ? [`"${sample.userText.replace(/\s+/g, " ").slice(0, 80)}"`] : [],
    );
    const users = cluster.users === 1 ? text(locale, "gapsUser") : text(locale, "gapsUsers", { count: cluster.users });
    const detail = text(locale, "gapsDetail", { users, first: ago(now - cluster.firstSeen, locale) });
    lines.push(
      `${line}\n   ${detail}${samples.length > 0 ? text(locale, "gapsSamples", { samples: samples.join("; ") }) : ""}`,
    );
  }
  return [text(locale, "gapsHeader", { hours, count: top.length }), ...lines].join("\n");
}

/** One line per cause: its words, how often, when last; the CLI adds first seen and the last error (the failure's own text). */
function environmentLines(environment: EnvironmentClusterReport[], context: ListContext): string {
  const { now, hours, locale } = context;
  const lines = environment.map((problem) => {
    const line = text(locale, "gapsEnvironmentLine", {
      cause: gapCauseWords(locale, problem.cause),
      count: problem.count,
      last: ago(now - problem.lastSeenAt, locale),
    });
    if (!context.detailed) return line;
    const error = problem.lastDetail
      ? text(locale, "gapsEnvironmentError", { detail: problem.lastDetail.replace(/\s+/g, " ").slice(0, 160) })
      : "";
    return `${line}\n   ${text(locale, "gapsEnvironmentDetail", { first: ago(now - problem.firstSeenAt, locale), error })}`;
  });
  return [text(locale, "gapsEnvironmentHeader", { hours }), ...lines].join("\n");
}

export function formatReload(
  changes: SkillChanges,
  version: number,
  total: number,
  locale: Locale,
  workspaceDir: string,
): string {
  if (changes.error) return text(locale, "reloadFailed", { reason: changes.error });
  const lines = [text(locale, "reloadDone", { version, total })];
  if (changes.added.length > 0) lines.push(text(locale, "reloadAdded", { names: changes.added.join(", ") }));
  if (changes.changed.length > 0) lines.push(text(locale, "reloadChanged", { names: changes.changed.join(", ") }));
  if (changes.removed.length > 0) lines.push(text(locale, "reloadRemoved", { names: changes.removed.join(", ") }));
  if (changes.invalid.length > 0) {
    lines.push(
      text(locale, "reloadInvalid", {
        items: changes.invalid
          .map((problem) => `${relative(workspaceDir, problem.path)}: ${problem.reason}`)
          .join("; "),
      }),
    );
  }
  if (lines.length === 1) lines.push(text(locale, "reloadUnchanged"));
  return lines.join("\n");
}

function ago(ms: number, locale: Locale): string {
  const minutes = Math.max(0, Math.round(ms / 60_000));
  if (minutes < 60) return text(locale, "minutesAgo", { count: minutes });
  const hours = Math.round(minutes / 60);
  if (hours < 48) return text(locale, "hoursAgo", { count: hours });
  return text(locale, "daysAgo", { count: Math.round(hours / 24) });
}
