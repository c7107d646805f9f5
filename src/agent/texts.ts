/** The bot's own words, per BOT_LOCALE. Model output is never translated. */
export type Locale = "zh" | "en";

const TEXTS = {
  help: {
    zh: "我是 {name}。直接告诉我你要做什么，我会用技能和工具帮你完成。\n\n命令：\n/help 显示帮助\n/start 介绍我自己\n/new 开始新的对话\n/context 查看上一轮发给模型的提示词各部分",
    en: "I'm {name}. Tell me what you need and I'll use my skills and tools to get it done.\n\nCommands:\n/help show this help\n/start introduce myself\n/new start a fresh conversation\n/context show the prompt sections of the last turn",
  },
  operatorHelp: {
    zh: "\n\n运维命令：\n/capability_gaps 查看能力缺口\n/reload_skills 重新加载技能",
    en: "\n\nOperator commands:\n/capability_gaps show capability gaps\n/reload_skills reload skills",
  },
  start: {
    zh: "你好，我是 {name}。{description}\n发送 /help 查看我能做什么。",
    en: "Hello, I'm {name}. {description}\nSend /help to see what I can do.",
  },
  newSession: { zh: "好的，已开始新的对话。之前的内容我不会再参考。", en: "Done: a fresh conversation. I won't use what was said before." },
  unknownCommand: { zh: "不认识的命令 {command}。发送 /help 查看可用命令。", en: "Unknown command {command}. Send /help for the commands I know." },
  operatorOnly: { zh: "{command} 只有运维人员可以使用。", en: "{command} is for operators only." },
  noContext: { zh: "这个对话还没有发给模型的内容。", en: "Nothing has been sent to the model in this conversation yet." },
  contextHeader: { zh: "上一轮的提示词（{total} 字符，{skills}）：", en: "Last turn's prompt ({total} characters, {skills}):" },
  contextSkills: { zh: "技能：{skills}", en: "skills: {skills}" },
  noModel: {
    zh: "还没有配置模型，所以我暂时无法回答。请在 {envFile} 中设置 LLM_BASE_URL、LLM_API_KEY 和 LLM_MODEL（任何兼容 OpenAI 的服务都可以），然后重启。命令（/help）仍然可用。",
    en: "No model is configured yet, so I can't answer. Set LLM_BASE_URL, LLM_API_KEY and LLM_MODEL in {envFile} (any OpenAI-compatible server works) and restart. Commands (/help) still work.",
  },
  modelFailed: {
    zh: "抱歉，模型服务暂时不可用（{reason}）。请稍后再试。",
    en: "Sorry, the model service is unavailable right now ({reason}). Please try again later.",
  },
  modelAuth: {
    zh: "抱歉，模型服务拒绝了机器人的 API 密钥，重试也不会好转。请运维人员检查 LLM_API_KEY（在 {envFile} 中）。",
    en: "Sorry, the model service refused the bot's API key; retrying will not help. An operator needs to check LLM_API_KEY (in {envFile}).",
  },
  modelUnreachable: {
    zh: "抱歉，连不上模型服务。请运维人员检查 LLM_BASE_URL（{baseUrl}）和网络。",
    en: "Sorry, I cannot reach the model service. An operator should check LLM_BASE_URL ({baseUrl}) and the network.",
  },
  modelRejected: {
    zh: "抱歉，模型服务拒绝了这个请求（{detail}）。请运维人员检查 LLM_MODEL 等设置。",
    en: "Sorry, the model service rejected the request ({detail}). An operator should check LLM_MODEL and the other model settings.",
  },
  turnCancelled: { zh: "（已取消。）", en: "(Cancelled.)" },
  turnTimedOut: {
    zh: "抱歉，这个任务超过了 {seconds} 秒，我已停止。可以再试一次，或者把任务拆小一点。（运维人员：见 TURN_TIMEOUT_MS，并检查模型服务。）",
    en: "Sorry, this took longer than {seconds} s, so I stopped. Try again, or ask for less at once. (Operators: see TURN_TIMEOUT_MS, and check the model service.)",
  },
  internalError: {
    zh: "抱歉，我这边出错了（追踪号 {traceId}）。请稍后再试，或把追踪号告诉运维人员。",
    en: "Sorry, something went wrong on my side (trace {traceId}). Try again, or give the trace id to an operator.",
  },
  stepBudget: {
    zh: "（我在 {steps} 步之内没能完成这个任务，以下是目前的进展。）",
    en: "(I could not finish this within {steps} steps; here is where I got to.)",
  },
  stepBudgetFallback: {
    zh: "我用完了 {steps} 步还没能完成。已经做过：{done}。你可以让我继续，或者把任务拆小一点。",
    en: "I ran out of {steps} steps before finishing. What I did: {done}. Ask me to continue, or split the task.",
  },
  emptyAnswer: { zh: "（模型没有给出回答。）", en: "(The model gave no answer.)" },
  gapsHeader: { zh: "能力缺口（最近 {hours} 小时，前 {count} 个）：", en: "Capability gaps (last {hours} h, top {count}):" },
  gapsNone: { zh: "最近 {hours} 小时没有能力缺口。", en: "No capability gaps in the last {hours} h." },
  gapsLine: {
    zh: "{index}. {intent} · {reason} · {class} · {count} 次 · {sessions} 个会话 · 最近 {last} · {draft}",
    en: "{index}. {intent} · {reason} · {class} · {count}× · {sessions} · last {last} · {draft}",
  },
  gapsNoDraft: { zh: "未起草", en: "no draft" },
  gapsDrafted: { zh: "草稿 {skill}", en: "draft {skill}" },
  gapsLinked: { zh: "关联 {skill}", en: "linked to {skill}" },
  gapsNeverDrafted: { zh: "环境问题，不起草", en: "environment: never drafted" },
  reloadDone: { zh: "技能已重新加载（版本 {version}，共 {total} 个）。", en: "Skills reloaded (version {version}, {total} skills)." },
  reloadFailed: { zh: "重新加载失败，继续使用之前的技能：{reason}", en: "Reload failed; the previous skills stay in use: {reason}" },
  reloadAdded: { zh: "新增：{names}", en: "added: {names}" },
  reloadChanged: { zh: "修改：{names}", en: "changed: {names}" },
  reloadRemoved: { zh: "删除：{names}", en: "removed: {names}" },
  reloadInvalid: { zh: "无效：{items}", en: "invalid: {items}" },
  reloadUnchanged: { zh: "没有变化。", en: "Nothing changed." },
  // Chat channels (Telegram, Feishu)
  notAllowed: {
    zh: "抱歉，我还没有被设置为和你对话。如需使用，请把你的用户 ID（{userId}）告诉运维人员，加入允许列表。",
    en: "Sorry, I'm not set up to talk with you yet. To get access, give an operator your user id ({userId}) for the allowlist.",
  },
  // Every channel: a message over MESSAGE_MAX_CHARS never reaches the model.
  messageTooLong: {
    zh: "抱歉，这条消息太长了（{chars} 个字符），我一次最多只能读 {maxChars} 个字符。请精简一下，或者分成几条发送。",
    en: "Sorry, that message is too long for me ({chars} characters); I can read at most {maxChars} characters at a time. Please shorten it, or split it into several messages.",
  },
  menuHelp: { zh: "显示帮助", en: "show help" },
  menuNew: { zh: "开始新的对话", en: "start a fresh conversation" },
  menuGaps: { zh: "查看能力缺口（运维）", en: "show capability gaps (operators)" },
  menuReload: { zh: "重新加载技能（运维）", en: "reload skills (operators)" },
} as const;

export type TextKey = keyof typeof TEXTS;

export function text(locale: Locale, key: TextKey, values: Record<string, string | number> = {}): string {
  return TEXTS[key][locale].replace(/\{(\w+)\}/g, (match, name: string) => (name in values ? String(values[name]) : match));
}
