/**
 * The parent orchestrator: one incoming message in, one answer out, everything stored.
 * Flow: dedupe + store the user message (trace id) -> command? answer it -> the turn's
 * steps (turn/run-turn.ts: lessons, history, route, tools, prompt, loop, answer) -> store
 * and return the answer -> after-turn hooks (gap loop, distillation).
 * Messages of one session run one at a time in arrival order; sessions run in parallel.
 */
import type { Logger } from "pino";
import type { IncomingMessage, TurnControl } from "../channels/channel.js";
import type { AgentDefinition } from "../config/agents.js";
import type { RuntimeLayout } from "../config/runtime-layout.js";
import type { SkillCatalog } from "../knowledge/skill-catalog.js";
import type { ChatModel } from "../llm/chat-model.js";
import type { Store } from "../store/store.js";
import type { ToolhostClient } from "../toolhost/client/toolhost-client.js";
import { builtinCommands } from "./commands/builtin-commands.js";
import { parseCommand, runCommand, type ChatCommand } from "./commands/chat-commands.js";
import { createGapRecorder, type GapRecorder } from "./gaps/gap-recorder.js";
import type { PromptManifest, PromptSection } from "./prompt/system-prompt.js";
import { KeyedSerialQueue } from "./session-queue.js";
import { text, type Locale } from "./texts.js";
import { newTraceId } from "./trace-id.js";
import { answerWithModel, type TurnOutcome } from "./turn/model-turn.js";
import { takeMessage } from "./turn/take-message.js";
import type { TurnEnv, TurnLessons, TurnReport } from "./turn/turn-context.js";

export type { TurnKind, TurnLessons, TurnReport } from "./turn/turn-context.js";

export type OrchestratorOptions = {
  store: Store;
  agents: AgentDefinition[];
  catalog: (agentId: string) => SkillCatalog;
  /** The agent's toolhost client (the library switch may relaunch it first). */
  toolhost: (agentId: string) => ToolhostClient | Promise<ToolhostClient>;
  /** Undefined when no model is configured: commands still work. */
  model: ChatModel | undefined;
  layout: RuntimeLayout;
  settings: {
    maxSteps: number;
    contextBudgetChars: number;
    locale: Locale;
    /** Overall deadline of a turn (TURN_TIMEOUT_MS); default the variables table's. */
    turnTimeoutMs?: number;
    /** Where the model lives, for the words of an unreachable-model answer. */
    modelBaseUrl?: string;
    /** MCP_MAX_TOOLS_PER_AGENT; default the variables table's. */
    mcpMaxTools?: number;
  };
  logger: Logger;
  /** Always-on rules of an agent (distillation adds them). */
  rules?: (agentId: string) => string[] | Promise<string[]>;
  /** The experience library's signpost, when the library is enabled for the agent (asked every turn). */
  librarySignpost?: (agentId: string) => PromptSection | undefined | Promise<PromptSection | undefined>;
  /** More prompt sections (distilled experiences): after the skills and the library signpost. */
  extraSections?: (context: { agentId: string; userText: string }) => PromptSection[] | Promise<PromptSection[]>;
  commands?: ChatCommand[];
  /** Records gaps (the gap loop's recorder merges keys and clusters); default: store only. */
  recordGap?: GapRecorder;
  afterTurn?: (turn: TurnReport) => void | Promise<void>;
  lessons?: TurnLessons;
  /** Trace ids (the eval harness makes them deterministic); default random. */
  newTraceId?: () => string;
  /** The clock of time-bound prompt sections (the 30 days a share migration is mentioned); default Date.now. */
  now?: () => number;
};

export type Orchestrator = {
  /** Answers one message; `control` cancels the turn and reports its progress. */
  handle(message: IncomingMessage, control?: TurnControl): Promise<string | undefined>;
  /** Resolves when every queued message has been answered. */
  idle(): Promise<void>;
  readonly recordGap: GapRecorder;
};

export function createOrchestrator(options: OrchestratorOptions): Orchestrator {
  const agents = new Map(options.agents.map((agent) => [agent.id, agent]));
  const queue = new KeyedSerialQueue();
  const inFlight = new Set<Promise<unknown>>();
  const env = turnEnv(options);
  const commands = commandTable(options, env, agents);
  const process = (message: IncomingMessage, control: TurnControl) =>
    processMessage(env, commands, agents, message, control);

  return {
    recordGap: env.recordGap,
    handle(message, control = {}) {
      const work = queue.run(`${message.agentId}:${message.channel}:${message.chatId}`, () =>
        process(message, control),
      );
      inFlight.add(work);
      void work.finally(() => inFlight.delete(work)).catch(() => undefined);
      return work;
    },
    async idle() {
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
  };
}

/** What every turn of this orchestrator shares: its options, the gap recorder, the last prompt per chat, the prompt's sources. */
function turnEnv(options: OrchestratorOptions): TurnEnv {
  const { store, settings } = options;
  return {
    options,
    recordGap: options.recordGap ?? createGapRecorder({ gaps: store.gaps, logger: options.logger }),
    lastPrompts: new Map<string, PromptManifest>(),
    promptSources: {
      layout: options.layout,
      locale: settings.locale,
      logger: options.logger,
      ...(options.rules ? { rules: options.rules } : {}),
      ...(options.librarySignpost ? { librarySignpost: options.librarySignpost } : {}),
      ...(options.extraSections ? { extraSections: options.extraSections } : {}),
      ...(options.now ? { now: options.now } : {}),
    },
  };
}

/** One message: taken in (or found again), a command answered, or a turn run; the answer stored; the after-turn hooks told. */
async function processMessage(
  env: TurnEnv,
  commands: ReturnType<typeof commandTable>,
  agents: Map<string, AgentDefinition>,
  message: IncomingMessage,
  control: TurnControl,
): Promise<string | undefined> {
  const { options } = env;
  const { store, settings } = options;
  const agent = agents.get(message.agentId);
  if (!agent) throw new Error(`no agent "${message.agentId}"`);
  const newTrace = (options.newTraceId ?? newTraceId)();
  const sessionKey = `${message.agentId}:${message.channel}:${message.chatId}`;
  const session = await store.sessions.activeSession(agent.id, message.channel, message.chatId);
  const command = parseCommand(message.text);
  const taken = await takeMessage(env, {
    message,
    sessionId: session.id,
    sessionKey,
    traceId: newTrace,
    isCommand: command !== undefined,
  });
  if (taken.state === "done") return taken.reply;
  const { traceId, log, userMessageId } = taken;
  log.info({ chars: message.text.length, command: command?.name }, "message received");

  if (command) {
    const reply = await runCommand(commands, command, { message, locale: settings.locale, sessionKey });
    await store.messages.append({
      sessionId: session.id,
      role: "assistant",
      kind: "command",
      content: reply,
      traceId,
    });
    return reply;
  }

  const { answer, kind, route }: TurnOutcome = options.model
    ? await answerWithModel(
        env,
        options.model,
        { agent, message, session, userMessageId, traceId, sessionKey, log },
        control,
      )
    : { kind: "no_model", answer: text(settings.locale, "noModel", { envFile: options.layout.envFile }) };
  await store.messages.append({ sessionId: session.id, role: "assistant", kind: "chat", content: answer, traceId });
  log.info({ chars: answer.length }, "answer sent");
  try {
    await options.afterTurn?.({
      message,
      traceId,
      sessionId: session.id,
      sessionKey,
      kind,
      ...(route ? { route } : {}),
      answer,
    });
  } catch (error) {
    log.error({ err: error }, "after-turn work failed");
  }
  return answer;
}

/** The chat commands: the built-in ones, then the operators' (a later one of the same name wins). */
function commandTable(
  options: OrchestratorOptions,
  env: TurnEnv,
  agents: Map<string, AgentDefinition>,
): Map<string, ChatCommand> {
  const commands = new Map<string, ChatCommand>();
  const operatorCommands = options.commands ?? [];
  for (const command of [
    ...builtinCommands({
      agent: (id) => agents.get(id),
      startNewSession: async (agentId, channel, chatId) => {
        await options.store.sessions.closeActive(agentId, channel, chatId);
      },
      lastPrompt: (key) => env.lastPrompts.get(key),
      operatorCommandsListed: () => operatorCommands.some((candidate) => candidate.operatorOnly),
      registered: () => operatorCommands,
    }),
    ...operatorCommands,
  ]) {
    commands.set(command.name, command);
  }
  return commands;
}
