/**
 * The composition root of a running bot: the store, the model, each agent's skill
 * catalog and toolhost, and the orchestrator over them. `close()` stops the toolhost
 * children first (their last calls are still recorded), then closes the store.
 */
import { gapCommands } from "../agent/commands/gap-commands.js";
import { librarySignpostSection } from "../agent/prompt/library-signpost.js";
import { createGapLoop, type GapLoop } from "../agent/gaps/gap-loop.js";
import { createDistillationLoop, type DistillationLoop } from "../agent/distillation/distillation-loop.js";
import { createCorrectionWatch } from "../agent/gaps/correction-watch.js";
import { feedbackCommand } from "../agent/distillation/feedback-command.js";
import { handleDistillRequests, skillCommands } from "../agent/distillation/skill-commands.js";
import { createSkillLoop } from "../agent/distillation/skill-loop.js";
import { publishSkillThroughToolhost } from "./publish-through-toolhost.js";
import { createOrchestrator, type Orchestrator, type OrchestratorOptions } from "../agent/orchestrator.js";
import type { AgentDefinition } from "../config/agents.js";
import type { LoadedConfig } from "../config/load-config.js";
import type { RuntimeLayout } from "../config/runtime-layout.js";
import { SkillCatalog } from "../knowledge/skill-catalog.js";
import { watchSkillFolders } from "../knowledge/skill-watcher.js";
import { readFileSync } from "node:fs";
import type { ChatModel } from "../llm/chat-model.js";
import { createOpenAIChatModel } from "../llm/openai-chat-model.js";
import { recordedModel } from "../llm/recorded-model.js";
import { configuredSecrets } from "../log/configured-secrets.js";
import type { Logger } from "../log/logger.js";
import { systemClock, type Clock } from "../store/clock.js";
import { openStore, type Store } from "../store/store.js";
import type { ToolhostPool } from "../toolhost/client/toolhost-pool.js";
import { VARIABLES } from "../config/variables.js";
import { configFingerprint } from "../replica/config-fingerprint.js";
import { startReplica, type Replica } from "../replica/replica.js";
import { recordRunningBot } from "./bot-pid-file.js";
import { createLibrarySwitch } from "./library-switch.js";
import { prepareToolhostLaunches, type AgentLaunch, type ToolhostLaunches } from "./toolhost-launch.js";
import type { AgentReach } from "./agent-reach.js";
import { createToolhostPool } from "./toolhost-pool-factory.js";
import { writeDraftThroughToolhost } from "./draft-through-toolhost.js";

export type BotRuntime = {
  store: Store;
  toolhosts: ToolhostPool;
  catalogs: Map<string, SkillCatalog>;
  model: ChatModel | undefined;
  gapLoop: GapLoop;
  /** Undefined when DISTILLATION_ENABLED=false. */
  distillation: DistillationLoop | undefined;
  orchestrator: Orchestrator;
  /** This process as one replica on the database: its leases, the bus to the others. */
  replica: Replica;
  close(): Promise<void>;
};

export type BotRuntimeOptions = {
  loaded: LoadedConfig;
  layout: RuntimeLayout;
  agents: AgentDefinition[];
  logger: Logger;
  cliEntry: string;
  /** How each agent's toolhost runs; prepared (and probed) here when not given. */
  launches?: ToolhostLaunches;
  /** The agents' egress proxy and MCP servers (runtime/agent-reach.ts), given to the launches; closed with the runtime. */
  reach?: AgentReach;
  clock?: Clock;
  /** Tests and benchmarks inject a model; otherwise it comes from LLM_* settings. */
  model?: ChatModel;
  /** Where the toolhost children's log lines go (the log file's descriptor); default: the bot's stderr. */
  childStderr?: () => number;
  /** Watch skills folders for changes (default true). */
  watchSkills?: boolean;
  extend?: (runtime: Omit<BotRuntime, "orchestrator" | "close" | "replica">) => Partial<OrchestratorOptions>;
};

export async function createBotRuntime(options: BotRuntimeOptions): Promise<BotRuntime> {
  const { config } = options.loaded;
  const clock = options.clock ?? systemClock;
  const store = await openStore(options.layout.databaseTarget, clock, {
    onIdleError: (error) =>
      options.logger.warn({ err: error }, "the database dropped an idle connection; the next query opens another"),
    maxConnections: config.DATABASE_POOL_MAX,
  });
  try {
    // Tool calls a stopped process left without an outcome (a crash, a kill) are marked now:
    // their intent rows were written ahead, so no call with effects goes unrecorded.
    const swept = await store.toolCalls.sweepStopped();
    if (swept > 0)
      options.logger.warn(
        { calls: swept },
        "tool calls whose process stopped before their outcome was recorded are marked 'outcome unknown (the bot stopped)'; laoding gaps show lists a trace's calls",
      );
    // Each agent's library switch as the store has it now: planning the launches is synchronous.
    const overrides = new Map<string, boolean | undefined>();
    for (const agent of options.agents) overrides.set(agent.id, await store.agentSettings.experienceLibrary(agent.id));
    const replica = await startReplica({
      store,
      ...(config.REPLICA_NAME ? { name: config.REPLICA_NAME } : {}),
      leaseMs: config.REPLICA_LEASE_MS,
      fingerprint: configFingerprint(
        options.loaded.raw,
        { "agents.json": readIfPresent(options.layout.agentsFile) },
        SECRET_VARIABLES,
      ),
      logger: options.logger,
      now: () => clock.now(),
    });
    try {
      return assembleRuntime(
        options,
        clock,
        store,
        replica,
        (agent) => overrides.get(agent.id) ?? agent.experienceLibrary,
      );
    } catch (error) {
      await replica.stop();
      throw error;
    }
  } catch (error) {
    await store.close();
    throw error;
  }
}

const SECRET_VARIABLES: ReadonlySet<string> = new Set(
  Object.entries(VARIABLES as Record<string, { secret?: boolean }>)
    .filter(([, spec]) => spec.secret)
    .map(([name]) => name),
);

function readIfPresent(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return "";
  }
}

function assembleRuntime(
  options: BotRuntimeOptions,
  clock: Clock,
  store: Store,
  replica: Replica,
  libraryEnabled: (agent: AgentDefinition) => boolean,
): BotRuntime {
  const { config } = options.loaded;
  const launchSetup = {
    config,
    layout: options.layout,
    cliEntry: options.cliEntry,
    libraryEnabled,
    ...(options.reach ? { reach: options.reach } : {}),
  };
  const launches = options.launches ?? prepareToolhostLaunches({ ...launchSetup, agents: options.agents });
  const toolhosts = createToolhostPool({
    config,
    launches,
    store,
    logger: options.logger,
    secrets: configuredSecrets(options.loaded, options.agents),
    ...(options.childStderr ? { childStderr: options.childStderr } : {}),
  });
  const library = createLibrarySwitch({
    agents: options.agents,
    settings: store.agentSettings,
    launches,
    toolhosts,
    replan: (agent, enabled) => {
      // The mode chosen at start-up stays: a switch must never quietly drop an agent from bwrap to none.
      const current = launches.agents.get(agent.id)?.setting ?? config.TOOLHOST_SANDBOX;
      const planned = prepareToolhostLaunches({
        ...launchSetup,
        config: { ...config, TOOLHOST_SANDBOX: current },
        agents: [agent],
        libraryEnabled: () => enabled,
      });
      for (const warning of planned.warnings) options.logger.warn(warning);
      return planned.agents.get(agent.id) as AgentLaunch;
    },
    logger: options.logger,
  });
  const baseModel = options.model ?? configuredModel(options.loaded, options.logger.child({ component: "model" }));
  // recordedModel's sink does not wait: a usage row is written beside the turn (on SQLite
  // at once, as before), a failure only logged, and close() waits for rows still on their way.
  const recording = new Set<Promise<void>>();
  const model = baseModel
    ? recordedModel(
        baseModel,
        (record) => {
          const write: Promise<void> = store.modelCalls
            .record(record)
            .catch((error: unknown) => options.logger.error({ err: error }, "could not record model usage"))
            .finally(() => recording.delete(write));
          recording.add(write);
        },
        clock,
      )
    : undefined;
  if (!model)
    options.logger.warn(
      { envFile: options.layout.envFile },
      "no model configured (LLM_BASE_URL, LLM_MODEL): chat messages get a configuration hint",
    );
  const catalogs = new Map(
    options.agents.map((agent) => [
      agent.id,
      new SkillCatalog(
        [
          { dir: options.layout.baseSkillsDir, source: "base" },
          { dir: options.layout.agentTrees(agent.id).skillsDir, source: "agent" },
        ],
        options.logger.child({ agentId: agent.id, component: "skills" }),
      ),
    ]),
  );
  const catalogOf = (agentId: string) => catalogs.get(agentId) as SkillCatalog;
  const reloadCatalogs = (why: string, only?: string) => {
    for (const [agentId, catalog] of catalogs) {
      if (only !== undefined && only !== "*" && only !== agentId) continue;
      const changes = catalog.reload();
      if (
        changes.error ||
        changes.added.length + changes.changed.length + changes.removed.length + changes.invalid.length > 0
      ) {
        options.logger.info({ agentId, version: catalog.snapshot.version, ...changes }, why);
      }
    }
  };
  const announceSkillsChanged = (agentId: string) =>
    void replica.bus
      .publish({ topic: "skills-changed", agentId })
      .catch((error: unknown) =>
        options.logger.warn({ err: error }, "could not tell the other replicas that skills changed"),
      );
  const unsubscribe = replica.bus.subscribe((event, from) => {
    if (from !== replica.name && event.topic === "skills-changed")
      reloadCatalogs(`skills reloaded: replica ${from} changed them`, event.agentId);
  });
  const gapLoop = createGapLoop({
    store,
    catalog: catalogOf,
    writeDraft: async (agentId, name, text) =>
      writeDraftThroughToolhost(
        await library.toolhost(agentId),
        options.layout.agentTrees(agentId).skillsDir,
        name,
        text,
      ),
    model,
    settings: {
      triggerCount: config.GAP_DRAFT_TRIGGER_COUNT,
      lookbackHours: config.GAP_CLUSTER_LOOKBACK_HOURS,
      locale: config.BOT_LOCALE,
    },
    logger: options.logger.child({ component: "gap-loop" }),
    clock,
  });
  const watcher =
    options.watchSkills === false
      ? undefined
      : watchSkillFolders(
          [
            options.layout.baseSkillsDir,
            ...options.agents.map((agent) => options.layout.agentTrees(agent.id).skillsDir),
          ],
          () => {
            reloadCatalogs("skills reloaded after a change on disk");
            // Watchers do not see another host's writes on a shared volume: the other replicas are told.
            announceSkillsChanged("*");
          },
          {
            onError: (error) =>
              options.logger.warn({ err: error }, "cannot watch a skills folder; use /reload_skills after changes"),
          },
        );
  const skills = createSkillLoop({
    store,
    model,
    catalog: catalogOf,
    writeDraft: async (agentId, name, text) =>
      writeDraftThroughToolhost(
        await library.toolhost(agentId),
        options.layout.agentTrees(agentId).skillsDir,
        name,
        text,
      ),
    publishSkill: async (agentId, name, text) =>
      publishSkillThroughToolhost(
        await library.toolhost(agentId),
        options.layout.agentTrees(agentId).skillsDir,
        name,
        text,
      ),
    locale: config.BOT_LOCALE,
    logger: options.logger.child({ component: "skill-distiller" }),
    clock,
  });
  const distillation = config.DISTILLATION_ENABLED
    ? createDistillationLoop({
        store,
        model,
        skills,
        settings: {
          locale: config.BOT_LOCALE,
          holdoutPercent: config.DISTILL_HOLDOUT_PERCENT,
          holdoutSeed: config.DISTILL_HOLDOUT_SEED,
          settleQuietMs: config.DISTILL_SETTLE_QUIET_MS,
        },
        logger: options.logger.child({ component: "distillation" }),
        clock,
        // A task the user corrected or gave negative /feedback is a capability gap (docs/gaps.md).
        onNegativeOutcome: (event) => gapLoop.recordNegativeOutcome(event),
      })
    : undefined;
  const watchCorrections = distillation
    ? undefined
    : createCorrectionWatch((event) => gapLoop.recordNegativeOutcome(event), {
        settleQuietMs: config.DISTILL_SETTLE_QUIET_MS,
      });
  const distillTimers = distillation
    ? startDistillationTimers(
        distillation,
        options.agents,
        config.DISTILL_SETTLE_QUIET_MS,
        config.DISTILL_CURATE_INTERVAL_MS,
        options.logger,
        () => handleDistillRequests(store, skills),
        (agentId) =>
          // One lifecycle round per interval across replicas: the lease outlives the round and is not released.
          store.leases.acquire(
            `curate:${agentId}`,
            replica.name,
            Math.max(1_000, config.DISTILL_CURATE_INTERVAL_MS - 1_000),
          ),
      )
    : undefined;
  const parts = { store, toolhosts, catalogs, model, gapLoop, distillation };
  const orchestrator = createOrchestrator({
    store,
    agents: options.agents,
    catalog: catalogOf,
    toolhost: (agentId) => library.toolhost(agentId),
    model,
    layout: options.layout,
    settings: {
      maxSteps: config.REACT_MAX_STEPS,
      contextBudgetChars: config.CONTEXT_CHAR_BUDGET,
      locale: config.BOT_LOCALE,
      turnTimeoutMs: config.TURN_TIMEOUT_MS,
      mcpMaxTools: config.MCP_MAX_TOOLS_PER_AGENT,
      ...(config.LLM_BASE_URL ? { modelBaseUrl: config.LLM_BASE_URL } : {}),
    },
    logger: options.logger,
    recordGap: gapLoop.recordGap,
    afterTurn: async (turn) => {
      // Registering the task is instant; its distillation runs later, off the reply's path.
      distillation?.afterTurn(turn);
      // Without the loop, nothing settles tasks: corrections still reach the gap loop (first:
      // a failing cluster evaluation below must not make it miss this turn).
      await watchCorrections?.(turn);
      await gapLoop.afterTurn(turn);
    },
    ...(distillation ? { lessons: distillation.lessons } : {}),
    // Operator-accepted rules (laoding rules accept), read each turn so a change applies at once.
    rules: async (agentId) => (await store.rules.active(agentId)).map((rule) => rule.text),
    librarySignpost: async (agentId) =>
      (await library.enabled(agentId))
        ? librarySignpostSection({ locale: config.BOT_LOCALE, linkName: options.layout.libraryLinkName })
        : undefined,
    commands: [
      ...gapCommands({
        clusters: store.clusters,
        catalog: catalogOf,
        lookbackHours: config.GAP_CLUSTER_LOOKBACK_HOURS,
        sinceMs: () => gapLoop.sinceMs(),
        now: () => clock.now(),
        workspaceDir: options.layout.workspaceDir,
        afterReload: announceSkillsChanged,
      }),
      ...(distillation ? [feedbackCommand(distillation), ...skillCommands({ store, skills })] : []),
    ],
    ...options.extend?.(parts),
  });
  // `laoding skills reload` and friends look here to know whether a bot is listening.
  const forgetRunningBot = recordRunningBot(options.layout.dataDir);
  let closed: Promise<void> | undefined;
  return {
    ...parts,
    orchestrator,
    replica,
    close() {
      closed ??= (async () => {
        watcher?.close();
        unsubscribe();
        await distillTimers?.stop();
        await orchestrator.idle();
        await distillation?.idle();
        await toolhosts.stopAll();
        await options.reach?.close();
        await Promise.all(recording);
        await replica.stop();
        await store.close();
        forgetRunningBot();
      })();
      return closed;
    },
  };
}

function configuredModel(loaded: LoadedConfig, logger: Logger): ChatModel | undefined {
  const { config } = loaded;
  if (!config.LLM_BASE_URL || !config.LLM_MODEL) return undefined;
  return createOpenAIChatModel({
    baseURL: config.LLM_BASE_URL,
    model: config.LLM_MODEL,
    timeoutMs: config.LLM_TIMEOUT_MS,
    maxRetries: config.LLM_MAX_RETRIES,
    logger,
    ...(config.LLM_API_KEY ? { apiKey: config.LLM_API_KEY } : {}),
  });
}

/** Settles quiet tasks (checked at a tenth of the quiet period) and runs the lesson lifecycle on its interval. */
function startDistillationTimers(
  loop: DistillationLoop,
  agents: AgentDefinition[],
  quietMs: number,
  curateMs: number,
  logger: Logger,
  handleRequests: () => Promise<number>,
  curateTurn: (agentId: string) => Promise<boolean>,
): { stop(): Promise<void> } {
  const settle = setInterval(
    () => {
      loop.settleQuiet().catch((error: unknown) => logger.error({ err: error }, "settling quiet tasks failed"));
      // Operators' `laoding experiences distill <tag>` requests wait here for the bot that owns the toolhosts.
      handleRequests().catch((error: unknown) => logger.error({ err: error }, "skill distillation requests failed"));
    },
    Math.max(1_000, Math.min(60_000, Math.floor(quietMs / 10))),
  );
  let curating: Promise<void> | undefined;
  const curateAll = async () => {
    for (const agent of agents) {
      try {
        if (!(await curateTurn(agent.id))) continue;
        const changes = await loop.curate(agent.id);
        if (changes.length > 0) logger.info({ agentId: agent.id, changes }, "lesson lifecycle applied");
      } catch (error) {
        logger.error({ err: error, agentId: agent.id }, "lesson lifecycle failed");
      }
    }
  };
  const curate = setInterval(() => {
    // One round at a time; a round never rejects (each agent's failure is logged), so nothing waits for it.
    if (curating) return;
    curating = curateAll().finally(() => (curating = undefined));
  }, curateMs);
  // Timers never keep the process alive on their own.
  settle.unref();
  curate.unref();
  return {
    /** Stops both timers; resolves when a lifecycle round under way has finished. */
    async stop() {
      clearInterval(settle);
      clearInterval(curate);
      await curating;
    },
  };
}
