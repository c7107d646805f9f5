/**
 * What happens to a capability cluster past the trigger: linked to a skill that covers
 * it, or drafted as `auto-<intent-key>` (the model's draft when it passes the structure
 * gate, else the template), and the catalog reloaded. Called by the gap loop, one
 * decision per agent at a time.
 */
import type { Logger } from "pino";
import type { SkillCatalog } from "../../knowledge/skill-catalog.js";
import {
  draftSkillName,
  gateDraft,
  renderDraftTemplate,
  type DraftEvidence,
  type DraftLocale,
  type DraftWrite,
} from "../../knowledge/skill-draft.js";
import type { ChatModel } from "../../llm/chat-model.js";
import type { ClusterStats } from "../../store/gap-clusters-store.js";
import type { Store } from "../../store/store.js";
import { writeDraftWithModel } from "./draft-writer.js";
import { overlappingSkill } from "./overlapping-skill.js";

export type GapLoopSettings = { triggerCount: number; lookbackHours: number; locale: DraftLocale };

export type DraftOutcome =
  | { action: "drafted"; skillName: string; path: string; author: "model" | "template" }
  | { action: "linked"; skillName: string; why: string }
  | { action: "skipped"; why: string }
  | { action: "rejected"; why: string };

/** What a draft decision works with: the store, the catalog, the draft writer, the model, the clock and the lookback window. */
export type DraftParts = {
  store: Store;
  catalog: (agentId: string) => SkillCatalog;
  /**
   * Creates `<agent's skills>/<name>/SKILL.md` unless that skill folder exists. The bot
   * runs it through the agent's own toolhost: it never writes into an agent's tree itself.
   */
  writeDraft: (agentId: string, name: string, text: string) => Promise<DraftWrite>;
  model: ChatModel | undefined;
  settings: GapLoopSettings;
  logger: Logger;
  clock: { now(): number };
  /** The start of the lookback window. */
  sinceMs: () => number;
};

/** A cluster past the trigger: linked to a skill that covers it, or drafted (the claim is released if drafting fails). */
export async function decide(parts: DraftParts, stats: ClusterStats): Promise<DraftOutcome> {
  const { store } = parts;
  const { agentId, intentKey } = stats;
  const log = parts.logger.child({ agentId, intentKey, reason: stats.reason });
  const existing = await store.clusters.draftFor(agentId, intentKey);
  if (existing) return { action: "skipped", why: `already ${existing.status} (${existing.skillName ?? "?"})` };
  const catalog = parts.catalog(agentId);
  const name = draftSkillName(intentKey);
  const sameName = catalog.snapshot.get(name);
  const similar = sameName ?? overlappingSkill(catalog.snapshot.skills, intentKey);
  if (similar) {
    if (!(await store.clusters.claimDraft(agentId, intentKey, similar.name, stats.count)))
      return { action: "skipped", why: "another turn decided first" };
    await store.clusters.settleDraft(agentId, intentKey, {
      status: "linked",
      skillName: similar.name,
      reason: "an existing skill covers this intent",
    });
    log.info({ skill: similar.name }, "gap cluster linked to an existing skill instead of drafting a near-duplicate");
    return {
      action: "linked",
      skillName: similar.name,
      why: sameName ? "a skill of that name exists" : "an existing skill overlaps strongly",
    };
  }
  if (!(await store.clusters.claimDraft(agentId, intentKey, name, stats.count)))
    return { action: "skipped", why: "another turn decided first" };
  try {
    return await draftSkill(parts, stats, { name, catalog, log });
  } catch (error) {
    await store.clusters.releaseDraft(agentId, intentKey);
    throw error;
  }
}

/** Writes the claimed cluster's draft (the model's when it passes the structure gate, else the template) and reloads the catalog. */
async function draftSkill(
  parts: DraftParts,
  stats: ClusterStats,
  draft: { name: string; catalog: SkillCatalog; log: Logger },
): Promise<DraftOutcome> {
  const { store, settings } = parts;
  const { agentId, intentKey } = stats;
  const { name, catalog, log } = draft;
  const evidence = await draftEvidence(parts, stats);
  const created = new Date(parts.clock.now()).toISOString().slice(0, 10);
  const expected = { name, intentKey, locale: settings.locale };
  let author: "model" | "template" = "template";
  let text: string | undefined;
  if (parts.model) {
    const written = await writeDraftWithModel({
      model: parts.model,
      name,
      evidence,
      locale: settings.locale,
      created,
      agentId,
    });
    const gate = written.ok ? gateDraft(written.value, expected) : written;
    if (gate.ok && written.ok) {
      text = written.value;
      author = "model";
    } else
      log.warn(
        { problem: gate.ok ? "" : gate.error },
        "the model's draft failed the structure gate; using the template",
      );
  }
  text ??= renderDraftTemplate(name, evidence, settings.locale, created);
  const gate = gateDraft(text, expected);
  if (!gate.ok) {
    await store.clusters.releaseDraft(agentId, intentKey);
    log.error({ problem: gate.error }, "draft rejected by the structure gate; nothing written");
    return { action: "rejected", why: gate.error };
  }
  const result = await parts.writeDraft(agentId, name, text);
  if (!result.written) {
    await store.clusters.settleDraft(agentId, intentKey, { status: "linked", skillName: name, reason: result.reason });
    return { action: "linked", skillName: name, why: result.reason };
  }
  await store.clusters.settleDraft(agentId, intentKey, { status: "drafted", skillName: name, path: result.path });
  const changes = catalog.reload();
  log.info(
    {
      skill: name,
      path: result.path,
      author,
      clusterSize: stats.count,
      sessions: stats.sessions,
      catalogVersion: catalog.snapshot.version,
      added: changes.added,
    },
    "skill drafted from a capability gap cluster",
  );
  return { action: "drafted", skillName: name, path: result.path, author };
}

/** The cluster's size and up to 8 samples: what users asked, and how the tools failed. */
async function draftEvidence(parts: DraftParts, stats: ClusterStats): Promise<DraftEvidence> {
  const evidence: DraftEvidence = {
    intentKey: stats.intentKey,
    reason: stats.reason,
    count: stats.count,
    sessions: stats.sessions,
    samples: [],
    errors: [],
  };
  for (const sample of await parts.store.clusters.samples(stats, parts.sinceMs(), 8)) {
    if (sample.userText && !evidence.samples.includes(sample.userText)) evidence.samples.push(sample.userText);
    const error = [sample.tool, sample.errorCode, sample.detail].filter(Boolean).join(": ");
    if (error && !evidence.errors.includes(error)) evidence.errors.push(error);
  }
  return evidence;
}
