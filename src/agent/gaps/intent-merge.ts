/**
 * Similar intent keys of one agent are merged so a cluster is not split by word order
 * or small wording differences: `docker-deploy` joins `deploy-docker` (same keyword set),
 * `deploying-dockers` joins it too (light stemming), and a key whose words contain all of
 * a known key's (2+ words) joins that key. The registry of known keys is small and indexed.
 */
import type { GapClustersStore } from "../../store/gap-clusters-store.js";

export function keyWords(intentKey: string): string[] {
  return [...new Set(intentKey.split("-").filter(Boolean).map(stem))].sort();
}

export function signature(intentKey: string): string {
  return keyWords(intentKey).join(" ");
}

function stem(word: string): string {
  if (!/^[a-z]+$/.test(word)) return word;
  if (word.length > 5 && word.endsWith("ing")) return word.slice(0, -3);
  if (word.length > 4 && word.endsWith("ed")) return word.slice(0, -2);
  if (word.length > 3 && word.endsWith("s") && !word.endsWith("ss")) return word.slice(0, -1);
  return word;
}

/** The canonical key for `intentKey` among the agent's known keys; remembers it. */
export async function canonicalIntentKey(
  clusters: GapClustersStore,
  agentId: string,
  intentKey: string,
  sinceMs: number,
): Promise<string> {
  const own = signature(intentKey);
  const chosen =
    (await clusters.keyWithSignature(agentId, own)) ??
    (await similarKnownKey(clusters, agentId, intentKey, sinceMs)) ??
    intentKey;
  await clusters.rememberKey(agentId, chosen, signature(chosen));
  return chosen;
}

async function similarKnownKey(
  clusters: GapClustersStore,
  agentId: string,
  intentKey: string,
  sinceMs: number,
): Promise<string | undefined> {
  const words = new Set(keyWords(intentKey));
  if (words.size < 2) return undefined;
  for (const known of await clusters.recentKeys(agentId, sinceMs)) {
    const other = new Set(known.signature.split(" ").filter(Boolean));
    if (other.size < 2) continue;
    const shared = [...words].filter((word) => other.has(word)).length;
    const union = new Set([...words, ...other]).size;
    const contains = shared === Math.min(words.size, other.size);
    if (shared / union >= 0.75 || (contains && shared >= 2)) return known.intentKey;
  }
  return undefined;
}
