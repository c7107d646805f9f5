/**
 * The capability-gap report of one agent as machines read it: the top clusters in a
 * lookback window with a few sample requests and the draft made for each, plus every
 * draft. `laoding gaps --json` prints it and the admin API serves it, from this one place.
 */
import type { ClusterStats, DraftRow, GapClustersStore } from "../../store/gap-clusters-store.js";

export const REPORT_CLUSTER_LIMIT = 50;
const REPORT_SAMPLES = 5;

export type GapClusterReport = ClusterStats & { samples: string[]; draft: DraftRow | null };
export type AgentGapReport = { agent: string; clusters: GapClusterReport[]; drafts: DraftRow[] };

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
  return { agent: agentId, clusters: reports, drafts };
}
