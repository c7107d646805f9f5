/**
 * One model-backed turn as a list of steps: lessons -> history -> route -> tools ->
 * prompt -> loop -> answer. Each step is a function of the turn context, in its own file.
 */
import type { ChatMessage } from "../../llm/chat-model.js";
import { chatFolder } from "../chat-folder.js";
import { composePrompt } from "../prompt/compose-prompt.js";
import { answerTurn, type TurnAnswer } from "./answer.js";
import { loadHistory } from "./history.js";
import { chooseLessons } from "./lessons.js";
import { runTurnLoop } from "./loop.js";
import { routeTurn } from "./route.js";
import { listTurnTools } from "./tools.js";
import type { TurnContext } from "./turn-context.js";

export async function runTurn(turn: TurnContext): Promise<TurnAnswer> {
  const { options, promptSources, lastPrompts } = turn.env;
  const { agent, message } = turn;
  const lessons = await chooseLessons(turn);
  const { history, summary } = await loadHistory(turn);
  // A snapshot for the whole turn: a reload during the turn does not change it.
  const snapshot = options.catalog(agent.id).snapshot;
  const route = await routeTurn(turn, snapshot, history);
  const cwd = chatFolder(options.layout.agentTrees(agent.id), message.channel, message.chatId);
  const client = await options.toolhost(agent.id);
  const allowedTools = route.skills.flatMap((name) => snapshot.get(name)?.allowedTools ?? []);
  const tools = await listTurnTools(turn, client, route, allowedTools);
  const prompt = await composePrompt(promptSources, {
    agent,
    userText: message.text,
    route,
    snapshot,
    summary,
    cwd,
    lessons,
  });
  lastPrompts.set(turn.sessionKey, tools.notes ? { ...prompt.manifest, tools: tools.notes } : prompt.manifest);
  const messages: ChatMessage[] = [
    { role: "system", content: prompt.text },
    ...history,
    { role: "user", content: message.text },
  ];
  const result = await runTurnLoop(turn, { route, client, tools, cwd, messages });
  return answerTurn(turn, route, result, tools.specs);
}
