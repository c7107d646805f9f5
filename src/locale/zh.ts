/**
 * The bot's own words in Chinese: the same keys as `en.ts` (the type below refuses a
 * missing or extra key). Commands, variable names and placeholders stay as they are;
 * everything else is Chinese, so a reply never mixes languages.
 */
import type { TextKey } from "./en.js";

export const zh: Record<TextKey, string> = {
  // Commands every chat user has
  help: "我是 {name}。直接告诉我你要做什么，我会用技能和工具帮你完成。\n\n命令：\n/help 显示帮助\n/start 介绍我自己\n/new 开始新的对话\n/context 查看上一轮发给模型的提示词各部分",
  operatorHelp: "\n\n运维命令：\n/capability_gaps 查看能力缺口\n/reload_skills 重新加载技能",
  helpFeedback: "/feedback good|bad [说明] 评价我上一个回答",
  helpDistillSkill: "/distill_skill <标签> 把该标签的经验整理成技能",
  helpSkillVersions: "/skill_versions <技能> [activate <版本>] 查看或切换整理出的技能版本",
  start: "你好，我是 {name}。{description}\n发送 /help 查看我能做什么。",
  newSession: "好的，已开始新的对话。之前的内容我不会再参考。",
  unknownCommand: "不认识的命令 {command}。发送 /help 查看可用命令。",
  operatorOnly:
    "{command} 只有运维人员可以使用。你的 ID 是 {userId}；运维人员可以运行：`laoding operators add {userId} --agent {agentId}`",
  noContext: "这个对话还没有发给模型的内容。",
  contextHeader: "上一轮的提示词（{total} 字符，{skills}）：",
  contextSkills: "技能：{skills}",
  contextMcpUnavailable: "MCP 服务 {server} 不可用（{state}）：{reason}；它启动之前，它的工具不会提供给模型。",
  contextMcpLeftOut: "有 {count} 个 MCP 工具没有放进请求（MCP_MAX_TOOLS_PER_AGENT）。",
  feedbackUsage: "用法：/feedback good|bad [说明]，评价我上一个回答。",
  feedbackNothing: "这个对话里还没有可以评价的回答。",
  feedbackThanks: "谢谢，已记录你对上一个回答的评价。",

  // Turns that did not end in the model's answer
  noModel:
    "还没有配置模型，所以我暂时无法回答。请在 {envFile} 中设置 LLM_BASE_URL、LLM_API_KEY 和 LLM_MODEL（任何兼容 OpenAI 的服务都可以），然后重启。命令（/help）仍然可用。",
  modelFailed: "抱歉，模型服务暂时不可用（{reason}）。请稍后再试。",
  modelAuth: "抱歉，模型服务拒绝了机器人的 API 密钥，重试也不会好转。请运维人员检查 LLM_API_KEY（在 {envFile} 中）。",
  modelUnreachable: "抱歉，连不上模型服务。请运维人员检查 LLM_BASE_URL（{baseUrl}）和网络。",
  modelRejected: "抱歉，模型服务拒绝了这个请求（{detail}）。请运维人员检查 LLM_MODEL 等设置。",
  turnCancelled: "（已取消。）",
  turnTimedOut:
    "抱歉，这个任务超过了 {seconds} 秒，我已停止。可以再试一次，或者把任务拆小一点。（运维人员：见 TURN_TIMEOUT_MS，并检查模型服务。）",
  internalError: "抱歉，我这边出错了（追踪号 {traceId}）。请稍后再试，或把追踪号告诉运维人员。",
  stepBudget: "（我在 {steps} 步之内没能完成这个任务，以下是目前的进展。）",
  stepBudgetFallback: "我用完了 {steps} 步还没能完成。已经做过：{done}。你可以让我继续，或者把任务拆小一点。",
  emptyAnswer: "（模型没有给出回答。）",

  // What went wrong with a model call, by ModelErrorKind
  modelErrorRateLimit: "请求太频繁，被限流",
  modelErrorServer: "服务器出错",
  modelErrorConnection: "连接不上",
  modelErrorTimeout: "超时",
  modelErrorAuth: "API 密钥被拒绝",
  modelErrorBadRequest: "请求被拒绝",
  modelErrorBadResponse: "返回内容无法解析",

  // Capability gaps
  gapsHeader: "能力缺口（最近 {hours} 小时，前 {count} 个）：",
  gapsNone: "最近 {hours} 小时没有能力缺口。",
  gapsLine: "{index}. {intent} · {reason} · {class} · {count} 次 · {sessions} · 最近 {last} · {draft}",
  gapsDetail: "{users} · 首次出现于 {first}",
  gapsSamples: " · 例如 {samples}",
  gapsSession: "1 个会话",
  gapsSessions: "{count} 个会话",
  gapsUser: "1 个用户",
  gapsUsers: "{count} 个用户",
  gapsNoDraft: "未起草",
  gapsDrafted: "草稿 {skill}",
  gapsLinked: "关联 {skill}",
  gapsNeverDrafted: "环境问题，不起草",
  gapReasonNoSkill: "没有合适的技能",
  gapReasonParseFailure: "模型输出无法解析",
  gapReasonToolFailure: "工具出错",
  gapReasonStepBudget: "步数用完",
  gapReasonModelFailure: "模型调用失败",
  gapReasonReported: "模型表示做不到",
  gapReasonNegativeOutcome: "用户指出回答有误",
  gapClassCapability: "能力",
  gapClassEnvironment: "环境",
  minutesAgo: "{count} 分钟前",
  hoursAgo: "{count} 小时前",
  daysAgo: "{count} 天前",

  // /reload_skills
  reloadDone: "技能已重新加载（版本 {version}，共 {total} 个）。",
  reloadFailed: "重新加载失败，继续使用之前的技能：{reason}",
  reloadAdded: "新增：{names}",
  reloadChanged: "修改：{names}",
  reloadRemoved: "删除：{names}",
  reloadInvalid: "无效：{items}",
  reloadUnchanged: "没有变化。",

  // /distill_skill and /skill_versions
  distillUsage: "用法：/distill_skill <标签>（查看标签：`laoding experiences list`）",
  distillNoLessons: "没有写入：没有带标签 {tag} 的有效经验。",
  skillNothingWritten: "没有写入：{why}",
  ratchetDropsBullets: "它删掉了上一版本 {lost}% 的要点（最多允许 {most}%）",
  ratchetCoversLess: "它覆盖了 {after}% 的已记录任务，而当前版本覆盖 {before}%",
  skillDebounced: "最近 {hours} 小时内已经写过一个版本",
  skillRejected: "{skill} v{version} 未通过：{why}",
  skillDrafted: "{skill} v{version} 已起草（{author}）。",
  skillPublished: "{skill} v{version} 已发布（{author}）。",
  skillAuthorModel: "由模型撰写",
  skillAuthorTemplate: "按模板生成",
  skillVersionsUsage: "用法：/skill_versions <整理出的技能> [activate <版本>]",
  skillNoVersions: "{skill} 还没有任何版本。",
  skillNoSuchVersion: "{skill} 没有第 {version} 版；发送 /skill_versions {skill} 查看所有版本。",
  skillVersionLive: "{skill} v{version} 已生效。",
  skillVersionLine: "v{version} {status} · {bullets} 条要点 · 试用 {successes}/{uses}",
  skillStatusCandidate: "候选",
  skillStatusActive: "生效中",
  skillStatusRejected: "未通过",
  skillStatusRolledBack: "已回滚",
  skillStatusRetired: "已停用",

  // Chat channels (Telegram, Feishu)
  databaseDown: "我暂时连不上数据库。你的消息已保留，数据库恢复后我会马上回复。",
  notAllowed: "抱歉，我还没有被设置为和你对话。如需使用，请把你的用户 ID（{userId}）告诉运维人员，加入允许列表。",
  messageTooLong:
    "抱歉，这条消息太长了（{chars} 个字符），我一次最多只能读 {maxChars} 个字符。请精简一下，或者分成几条发送。",
  menuHelp: "显示帮助",
  menuNew: "开始新的对话",
  menuGaps: "查看能力缺口（运维）",
  menuReload: "重新加载技能（运维）",

  // The console's chrome
  consolePrompt: "你> ",
  consoleReply: "机器人> ",
  consoleError: "出错：{message}",
  logNotice: "{level}：{message}（详情：{where}）",
  logNoticeWarning: "警告",
  logNoticeError: "错误",
  consoleReady:
    "LaodingBot 已就绪（智能体 {agentId}，沙箱 {sandbox}）。日志：{logDir}（`laoding logs`）。按 Ctrl-C 取消正在准备的回答；在提示符处按 Ctrl-C 或 Ctrl-D 退出。",
  statusWaiting: "等待模型",
  statusRouting: "选择技能",
  statusThinking: "思考中",
  statusThinkingStep: "思考中（第 {step} 步）",
  statusTool: "运行 {tool}",
  statusRetrying: "模型调用失败，正在重试（第 {attempt}/{maxAttempts} 次）",
  statusRetryingKind: "模型调用失败（{reason}），正在重试（第 {attempt}/{maxAttempts} 次）",
  statusCancelling: "正在取消（再按 Ctrl-C 退出）",
  statusCancelHint: "（Ctrl-C 取消）",
};
