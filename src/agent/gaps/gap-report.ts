/**
 * The gap report of one agent as machines read it: the top capability clusters in a
 * lookback window with a few sample requests and the draft made for each, the environment
 * problems by cause apart from them (counts and times, never the user's words), plus
 * every draft. `laoding gaps --json` prints it and the admin API serves it, from this one place.
 */
import type {
  ClusterStats,
  DraftRow,
  EnvironmentClusterReport,
  GapClustersStore,
} from "../../store/gap-clusters-store.js";

export type { EnvironmentClusterReport };

export const REPORT_CLUSTER_LIMIT = 50;
const REPORT_SAMPLES = 5;

export type GapClusterReport = ClusterStats & { samples: string[]; draft: DraftRow | null };
export type AgentGapReport = {
  agent: string;
  /** Capability clusters only. */
  clusters: GapClusterReport[];
  /** Environment problems by cause, the most recently seen first. */
  environment: EnvironmentClusterReport[];
  drafts: DraftRow[];
};

export async function agentGapReport(
  clusters: GapClustersStore,
  agentId: string,
  sinceMs: number,
): Promise<AgentGapReport> {
  const drafts = await clusters.drafts(agentId);
  const reports: GapClusterReport[] = [];
  for (const cluster of await clusters.top(agentId, sinceMs, REPORT_CLUSTER_LIMIT)) {
    reports.push({
      ...cluster,
      samples: (await clusters.samples(cluster, sinceMs, REPORT_SAMPLES)).flatMap((sample) =>
        sample.userText ? [sample.userText] : [],
      ),
      draft: drafts.find((draft) => draft.intentKey === cluster.intentKey) ?? null,
    });
  }
  return { agent: agentId, clusters: reports, environment: await clusters.environment(agentId, sinceMs), drafts };
}
