/**
 * The parent orchestrator: one incoming message in, one answer out, everything stored.
 * Flow: dedupe + store the user message (trace id) -> command? answer it -> history with
 * rolling summary -> route to <= 2 skills -> system prompt -> ReAct loop over the agent's
 * toolhost tools -> store and return the answer -> after-turn hooks (gap loop).
 * Messages of one session run one at a time in arrival order; sessions run in parallel.
 */
import { readFileSync } from "node:fs";
import type { Logger } from "pino";
import type { IncomingMessage, TurnControl } from "../channels/channel.js";
import { personaFile, type AgentDefinition } from "../config/agents.js";
import type { RuntimeLayout } from "../config/runtime-layout.js";
import type { SkillCatalog, SkillSnapshot } from "../knowledge/skill-catalog.js";
import type { ChatMessage, ChatModel, ToolSpec } from "../llm/chat-model.js";
import { ModelError } from "../llm/model-errors.js";
import { childFor } from "../log/logger.js";
import type { Store } from "../store/store.js";
import type { ToolhostClient } from "../toolhost/client/toolhost-client.js";
import { chatFolder } from "./chat-folder.js";
import { extractCitations } from "./distillation/citations.js";
import { unsafeText } from "./distillation/unsafe-text.js";
import { builtinCommands } from "./commands/builtin-commands.js";
import { parseCommand, runCommand, type ChatCommand } from "./commands/chat-commands.js";
import { fitToBudget, summarize } from "./conversation/history.js";
import { createGapRecorder, type GapEvent, type GapRecorder } from "./gaps/gap-recorder.js";
import { normalizeIntentKey } from "./gaps/intent-key.js";
import { agentAreaSection } from "./prompt/share-area-section.js";
import { buildSystemPrompt, skillsSection, toolGuidanceSection, type PromptManifest, type PromptSection } from "./prompt/system-prompt.js";
import { runReactLoop, type ReactLoopResult } from "./react/react-loop.js";
import { createToolExecutor } from "./react/tool-executor.js";
import { toModelToolName, toolNameMap } from "./react/tool-names.js";
import { routeMessage, type RouteDecision } from "./routing/route-message.js";
import { KeyedSerialQueue } from "./session-queue.js";
import { modelErrorWords, text, type Locale } from "./texts.js";
import { newTraceId } from "./trace-id.js";

/** How a turn ended: the distillation loop's gates read it. */
export type TurnKind = "answered" | "step_budget" | "cancelled" | "timeout" | "model_failure" | "internal_error" | "no_model";

export type TurnReport = {
  message: IncomingMessage;
  traceId: string;
  sessionId: number;
  sessionKey: string;
  kind: TurnKind;
  route?: RouteDecision;
  answer: string;
};

/**
 * Lessons for a task (the distillation loop): chosen before routing and shown as a prompt
 * section (or held out), and the citation line taken out of the answer before anyone
 * sees or stores it.
 */
export type TurnLessons = {
  select(task: { agentId: string; traceId: string; sessionKey: string; userText: string }): PromptSection | undefined | Promise<PromptSection | undefined>;
  strip(task: { agentId: string; traceId: string }, answer: string): string | Promise<string>;
};

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
    /** Overall deadline of a turn (TURN_TIMEOUT_MS); default 3 minutes. */
    turnTimeoutMs?: number;
    /** Where the model lives, for the words of an unreachable-model answer. */
    modelBaseUrl?: string;
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
  const { store, layout, settings } = options;
  const agents = new Map(options.agents.map((agent) => [agent.id, agent]));
  const queue = new KeyedSerialQueue();
  const lastPrompts = new Map<string, PromptManifest>();
  const recordGap = options.recordGap ?? createGapRecorder({ gaps: store.gaps, logger: options.logger });
  const inFlight = new Set<Promise<unknown>>();

  const commands = new Map<string, ChatCommand>();
  const operatorCommands = options.commands ?? [];
  for (const command of [
    ...builtinCommands({
      agent: (id) => agents.get(id),
      startNewSession: async (agentId, channel, chatId) => {
        await store.sessions.closeActive(agentId, channel, chatId);
      },
      lastPrompt: (key) => lastPrompts.get(key),
      operatorCommandsListed: () => operatorCommands.some((candidate) => candidate.operatorOnly),
      registered: () => operatorCommands,
    }),
    ...operatorCommands,
  ]) {
    commands.set(command.name, command);
  }

  async function process(message: IncomingMessage, control: TurnControl): Promise<string | undefined> {
    const agent = agents.get(message.agentId);
    if (!agent) throw new Error(`no agent "${message.agentId}"`);
    let traceId = (options.newTraceId ?? newTraceId)();
    const sessionKey = `${message.agentId}:${message.channel}:${message.chatId}`;
    let log = childFor(options.logger, { traceId, agentId: agent.id, sessionKey });
    const session = await store.sessions.activeSession(agent.id, message.channel, message.chatId);
    const command = parseCommand(message.text);
    const dedupeKey = message.messageId ? `${message.channel}:${message.chatId}:${message.messageId}` : undefined;
    let userMessageId = await store.messages.append({
      sessionId: session.id,
      role: "user",
      kind: command ? "command" : "chat",
      content: message.text,
      traceId,
      userId: message.userId,
      ...(dedupeKey ? { dedupeKey } : {}),
    });
    if (userMessageId === undefined) {
      const earlier = message.resumed && dedupeKey ? await store.messages.byDedupeKey(dedupeKey) : undefined;
      if (!earlier) {
        log.info({ messageId: message.messageId }, "duplicate message dropped");
        return undefined;
      }
      // Taken up again after the bot (or its replica) stopped mid-turn: finish that turn, under its trace.
      traceId = earlier.traceId;
      log = childFor(options.logger, { traceId, agentId: agent.id, sessionKey });
      const answered = (await store.messages.byTrace(traceId)).filter((row) => row.role === "assistant" && row.kind !== "scratch").at(-1);
      if (answered) {
        log.info({ messageId: message.messageId }, "the answer of an interrupted turn was stored but not its reply: sending it");
        return answered.content;
      }
      log.info({ messageId: message.messageId }, "taking up a turn the bot did not finish");
      userMessageId = earlier.id;
    }
    log.info({ chars: message.text.length, command: command?.name }, "message received");

    if (command) {
      const reply = await runCommand(commands, command, { message, locale: settings.locale, sessionKey });
      await store.messages.append({ sessionId: session.id, role: "assistant", kind: "command", content: reply, traceId });
      return reply;
    }

    let answer: string;
    let route: RouteDecision | undefined;
    let kind: TurnKind;
    if (!options.model) {
      kind = "no_model";
      answer = text(settings.locale, "noModel", { envFile: layout.envFile });
    } else {
      const turnTimeoutMs = settings.turnTimeoutMs ?? DEFAULT_TURN_TIMEOUT_MS;
      const deadline = AbortSignal.timeout(turnTimeoutMs);
      const signal = control.signal ? AbortSignal.any([control.signal, deadline]) : deadline;
      const model = steeredModel(options.model, signal, control);
      try {
        const gapBase = { agentId: agent.id, sessionId: session.id, traceId, userText: message.text, userId: message.userId };
        const turn = await runTurn({ agent, message, model, sessionId: session.id, summary: session.summary, summaryUntil: session.summaryUntilMessageId ?? 0, userMessageId, traceId, sessionKey, log, signal, control, gapBase });
        answer = turn.answer;
        route = turn.route;
        kind = turn.kind;
        // A cancel that came while the last answer was arriving still cancels: the user asked.
        if (signal.aborted) throw signal.reason;
      } catch (error) {
        if (signal.aborted) {
          const timedOut = deadline.aborted && !control.signal?.aborted;
          log.info({ outcome: timedOut ? "timeout" : "cancelled", timeoutMs: timedOut ? turnTimeoutMs : undefined }, timedOut ? "turn passed its deadline; cancelled" : "turn cancelled");
          kind = timedOut ? "timeout" : "cancelled";
          answer = timedOut ? text(settings.locale, "turnTimedOut", { seconds: Math.round(turnTimeoutMs / 1000) }) : text(settings.locale, "turnCancelled");
        } else if (error instanceof ModelError) {
          // One line: the adapter's message already says what failed; the stack adds nothing.
          log.error({ kind: error.kind, status: error.status, detail: error.message }, "model call failed");
          await recordGap({ agentId: agent.id, sessionId: session.id, traceId, intentKey: normalizeIntentKey("", message.text), reason: "model_failure", errorCode: error.kind, detail: error.message, userText: message.text, userId: message.userId });
          kind = "model_failure";
          answer = modelFailureText(error);
        } else {
          // A bug or a broken disk: the user still gets an answer with a trace id to report.
          log.error({ err: error }, "turn failed");
          kind = "internal_error";
          answer = text(settings.locale, "internalError", { traceId });
        }
      }
    }
    await store.messages.append({ sessionId: session.id, role: "assistant", kind: "chat", content: answer, traceId });
    log.info({ chars: answer.length }, "answer sent");
    try {
      await options.afterTurn?.({ message, traceId, sessionId: session.id, sessionKey, kind, ...(route ? { route } : {}), answer });
    } catch (error) {
      log.error({ err: error }, "after-turn work failed");
    }
    return answer;
  }

  /** Everything one model-backed turn works with; built once in `process`. */
  type TurnContext = {
    agent: AgentDefinition;
    message: IncomingMessage;
    model: ChatModel;
    sessionId: number;
    summary: string | null;
    summaryUntil: number;
    userMessageId: number;
    traceId: string;
    sessionKey: string;
    log: Logger;
    signal: AbortSignal;
    control: TurnControl;
    /** What every gap of this turn carries. */
    gapBase: Omit<GapEvent, "intentKey" | "reason">;
  };

  type TurnTools = { specs: ToolSpec[]; names: Map<string, string> };
  type HistoryMessage = { role: "user" | "assistant"; content: string };

  /** History -> route -> tools -> prompt -> loop -> answer (or an honest partial one). */
  async function runTurn(turn: TurnContext): Promise<{ answer: string; route: RouteDecision; kind: "answered" | "step_budget" }> {
    const lessons = await chooseLessons(turn);
    const { history, summary } = await loadHistory(turn);
    // A snapshot for the whole turn: a reload during the turn does not change it.
    const snapshot = options.catalog(turn.agent.id).snapshot;
    const route = await routeTurn(turn, snapshot, history);
    const cwd = chatFolder(layout.agentTrees(turn.agent.id), turn.message.channel, turn.message.chatId);
    const client = await options.toolhost(turn.agent.id);
    const tools = await listTurnTools(turn, client, route);
    const prompt = await composePrompt(turn, { route, snapshot, summary, cwd, lessons });
    const messages: ChatMessage[] = [{ role: "system", content: prompt.text }, ...history, { role: "user", content: turn.message.text }];
    const result = await runTurnLoop(turn, { route, client, tools, cwd, messages });
    if (result.stop === "final") {
      return { answer: (await withoutCitations(turn, result.answer)).trim() || text(settings.locale, "emptyAnswer"), route, kind: "answered" };
    }
    turn.log.warn({ steps: result.steps }, "step budget exhausted");
    await recordGap({ ...turn.gapBase, intentKey: route.intentKey, reason: "step_budget", detail: `tools used: ${result.toolsUsed.join(", ")}` });
    return { answer: await withoutCitations(turn, await partialAnswer({ turn, messages: result.messages, tools: tools.specs, steps: result.steps, toolsUsed: result.toolsUsed })), route, kind: "step_budget" };
  }

  /** Before routing: the task's lessons (none when held out); a failure here never breaks the turn. */
  async function chooseLessons(turn: TurnContext): Promise<PromptSection | undefined> {
    try {
      return await options.lessons?.select({ agentId: turn.agent.id, traceId: turn.traceId, sessionKey: turn.sessionKey, userText: turn.message.text });
    } catch (error) {
      turn.log.error({ err: error }, "could not choose lessons; answering without them");
      return undefined;
    }
  }

  /** The citation line is bookkeeping: parsed and removed before the user or the store sees the answer. */
  async function withoutCitations(turn: TurnContext, answer: string): Promise<string> {
    // Even with the loop off, a model that learned the habit never shows the line to a user.
    if (!options.lessons) return extractCitations(answer).answer;
    try {
      return await options.lessons.strip({ agentId: turn.agent.id, traceId: turn.traceId }, answer);
    } catch (error) {
      turn.log.error({ err: error }, "could not read the lesson citations");
      return answer;
    }
  }

  /** The newest messages within the budget; older ones folded into the rolling summary. */
  async function loadHistory(turn: TurnContext): Promise<{ history: HistoryMessage[]; summary: string | null }> {
    const rows = (await store.messages.chatAfter(turn.sessionId, turn.summaryUntil)).filter((row) => row.id < turn.userMessageId);
    const { recent, overflow } = fitToBudget(rows, settings.contextBudgetChars);
    let summary = turn.summary;
    if (overflow.length > 0) {
      const folded = await summarize({ model: turn.model, previous: summary, overflow, traceId: turn.traceId, agentId: turn.agent.id, logger: turn.log });
      if (folded) {
        summary = folded;
        await store.sessions.setSummary(turn.sessionId, folded, (overflow.at(-1) as { id: number }).id);
      }
    }
    return { history: recent.map((row) => ({ role: row.role as "user" | "assistant", content: row.content })), summary };
  }

  async function routeTurn(turn: TurnContext, snapshot: SkillSnapshot, history: HistoryMessage[]): Promise<RouteDecision> {
    const route = await routeMessage({ model: turn.model, snapshot, userText: turn.message.text, recent: history, traceId: turn.traceId, agentId: turn.agent.id, logger: turn.log });
    turn.log.info({ skills: route.skills, intentKey: route.intentKey, confidence: route.confidence, catalogVersion: snapshot.version }, "routed");
    if (route.gap) await recordGap({ ...turn.gapBase, intentKey: route.intentKey, reason: route.gap, ...(route.unparsed ? { detail: `routing reply: ${route.unparsed}` } : {}) });
    return route;
  }

  /** The agent's tools as the model sees them; none (and a gap) when the toolhost is down. */
  async function listTurnTools(turn: TurnContext, client: ToolhostClient, route: RouteDecision): Promise<TurnTools> {
    try {
      const tools = await client.listTools();
      return {
        names: toolNameMap(tools.map((tool) => tool.name)),
        specs: tools.map((tool) => ({ name: toModelToolName(tool.name), description: tool.description, parameters: tool.inputSchema })),
      };
    } catch (error) {
      turn.log.error({ err: error }, "tools unavailable; answering without them");
      await recordGap({ ...turn.gapBase, intentKey: route.intentKey, reason: "tool_failure", tool: "tool.list", errorCode: "TOOLHOST_UNAVAILABLE", detail: (error as Error).message });
      return { specs: [], names: new Map() };
    }
  }

  /** The system prompt from its named sections; its manifest is kept for `/context`. */
  async function composePrompt(turn: TurnContext, parts: { route: RouteDecision; snapshot: SkillSnapshot; summary: string | null; cwd: string; lessons: PromptSection | undefined }): Promise<{ text: string; manifest: PromptManifest }> {
    const { agent, message } = turn;
    const routedSkills = parts.route.skills.flatMap((name) => {
      const skill = parts.snapshot.get(name);
      return skill ? [skill] : [];
    });
    const signpost = await options.librarySignpost?.(agent.id);
    const persona = readPersona(agent);
    const rules = (await options.rules?.(agent.id)) ?? [];
    const extra = (await options.extraSections?.({ agentId: agent.id, userText: message.text })) ?? [];
    const sections: PromptSection[] = [
      { name: "persona", content: persona },
      { name: "rules", content: rulesSection(rules) },
      skillsSection(routedSkills),
      ...(signpost ? [signpost] : []),
      ...(parts.lessons ? [parts.lessons] : []),
      ...extra,
      toolGuidanceSection({ cwd: parts.cwd, locale: settings.locale }),
      agentAreaSection({ layout, agentId: agent.id, nowMs: (options.now ?? Date.now)() }),
      { name: "conversation-summary", content: parts.summary ? `## Earlier in this conversation\n${parts.summary}` : "" },
    ];
    const prompt = buildSystemPrompt(sections, parts.route.skills);
    lastPrompts.set(turn.sessionKey, prompt.manifest);
    return prompt;
  }

  function runTurnLoop(turn: TurnContext, parts: { route: RouteDecision; client: ToolhostClient; tools: TurnTools; cwd: string; messages: ChatMessage[] }): Promise<ReactLoopResult> {
    const executeTool = createToolExecutor({
      client: parts.client,
      names: parts.tools.names,
      cwd: parts.cwd,
      traceId: turn.traceId,
      sessionId: turn.sessionId,
      signal: turn.signal,
      onCall: (tool) => turn.control.onProgress?.({ state: "tool", tool }),
      // A call cut short by a cancel says nothing about what the agent can do.
      onFailure: async (report) => {
        if (!turn.signal.aborted) await recordGap({ ...turn.gapBase, intentKey: parts.route.intentKey, reason: report.kind, tool: report.tool, errorCode: report.code, detail: report.reason });
      },
    });
    return runReactLoop({
      model: turn.model,
      messages: parts.messages,
      tools: parts.tools.specs,
      executeTool,
      maxSteps: settings.maxSteps,
      traceId: turn.traceId,
      agentId: turn.agent.id,
      signal: turn.signal,
      onMessage: (chatMessage) => storeScratch(turn.sessionId, turn.traceId, chatMessage),
    });
  }

  /** Out of steps: the model says, without tools, what it found and what is missing. */
  async function partialAnswer(input: { turn: TurnContext; messages: ChatMessage[]; tools: ToolSpec[]; steps: number; toolsUsed: string[] }): Promise<string> {
    const { turn } = input;
    const note = text(settings.locale, "stepBudget", { steps: input.steps });
    try {
      const response = await turn.model.complete({
        purpose: "partial",
        traceId: turn.traceId,
        agentId: turn.agent.id,
        messages: [...input.messages, { role: "user", content: "You have run out of steps. Without calling tools, tell me honestly what you found and did so far, and what is still missing." }],
        tools: input.tools,
        toolChoice: "none",
      });
      if (response.content?.trim()) return `${note}\n\n${response.content.trim()}`;
    } catch (error) {
      turn.log.warn({ err: error }, "could not get a partial answer from the model");
    }
    return text(settings.locale, "stepBudgetFallback", { steps: input.steps, done: [...new Set(input.toolsUsed)].join(", ") || "-" });
  }

  /** The words for a failed model call: what happened, and who can do what about it. */
  function modelFailureText(error: ModelError): string {
    switch (error.kind) {
      case "auth":
        return text(settings.locale, "modelAuth", { envFile: layout.envFile });
      case "connection":
        return text(settings.locale, "modelUnreachable", { baseUrl: settings.modelBaseUrl ?? "LLM_BASE_URL" });
      case "bad_request":
        return text(settings.locale, "modelRejected", { detail: error.status ? `HTTP ${error.status}` : modelErrorWords(settings.locale, error.kind) });
      default:
        return text(settings.locale, "modelFailed", { reason: modelErrorWords(settings.locale, error.kind) });
    }
  }

  async function storeScratch(sessionId: number, traceId: string, message: ChatMessage): Promise<void> {
    if (message.role === "assistant" && message.toolCalls && message.toolCalls.length > 0) {
      await store.messages.append({
        sessionId,
        role: "assistant",
        kind: "scratch",
        content: message.content ?? "",
        toolCalls: message.toolCalls.map((call) => ({ id: call.id, name: call.name, arguments: call.argumentsText })),
        traceId,
      });
    } else if (message.role === "tool") {
      await store.messages.append({ sessionId, role: "tool", kind: "scratch", content: message.content, toolCallId: message.toolCallId, traceId });
    }
  }

  function readPersona(agent: AgentDefinition): string {
    const plain = `You are ${agent.name}, a helpful team assistant.${agent.description ? ` ${agent.description}` : ""}`;
    try {
      // Checked again per turn: bot_context/ may have changed since start-up.
      const file = personaFile(layout.botContextDir, agent);
      if (file) return readFileSync(file, "utf8");
      options.logger.warn({ persona: agent.persona ?? "soul.md", agentId: agent.id }, "persona file missing; using a plain one");
    } catch (error) {
      options.logger.error({ agentId: agent.id, reason: (error as Error).message }, "persona file refused; using a plain one");
    }
    return plain;
  }

  return {
    recordGap,
    handle(message, control = {}) {
      const work = queue.run(`${message.agentId}:${message.channel}:${message.chatId}`, () => process(message, control));
      inFlight.add(work);
      void work.finally(() => inFlight.delete(work)).catch(() => undefined);
      return work;
    },
    async idle() {
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
  };
}

const DEFAULT_TURN_TIMEOUT_MS = 180_000;

/**
 * The turn's view of the model: every call carries the turn's signal and reports what it
 * is for (routing, thinking) and each retry, so routing, summaries, the loop and partial
 * answers are all cancelled and shown the same way without each knowing about it.
 */
function steeredModel(model: ChatModel, signal: AbortSignal, control: TurnControl): ChatModel {
  let step = 0;
  return {
    model: model.model,
    complete(request) {
      if (request.purpose === "route") control.onProgress?.({ state: "routing" });
      else if (request.purpose === "react") control.onProgress?.({ state: "thinking", step: (step += 1) });
      return model.complete({
        ...request,
        signal: request.signal ? AbortSignal.any([request.signal, signal]) : signal,
        onRetry: (retry) => {
          request.onRetry?.(retry);
          control.onProgress?.({ state: "retrying", ...retry });
        },
      });
    },
  };
}

/** Rules stored before the text checks existed are checked again here: hidden text or a download piped into a shell never reaches a prompt. */
function rulesSection(stored: string[]): string {
  const rules = stored.filter((rule) => {
    const unsafe = unsafeText(rule);
    return unsafe === undefined || unsafe.hold === true;
  });
  return rules.length === 0 ? "" : ["## Rules", ...rules.map((rule) => `- ${rule}`)].join("\n");
}
