/**
 * The bot's own words in English: every text a chat user or an operator reads in a chat
 * or at the console. `zh.ts` has exactly these keys (its type says so, and
 * test/agent/locale.test.ts checks the placeholders too). Model output is never translated.
 */
export const en = {
  // Commands every chat user has
  help: "I'm {name}. Tell me what you need and I'll use my skills and tools to get it done.\n\nCommands:\n/help show this help\n/start introduce myself\n/new start a fresh conversation\n/context show the prompt sections of the last turn",
  operatorHelp:
    "\n\nOperator commands:\n/capability_gaps show capability gaps and environment problems\n/reload_skills reload skills",
  helpFeedback: "/feedback good|bad [text] rate my last answer",
  helpDistillSkill: "/distill_skill <tag> distil a tag's lessons into a skill now",
  helpSkillVersions: "/skill_versions <skill> [activate <N>] list or switch a distilled skill's versions",
  start: "Hello, I'm {name}. {description}\nSend /help to see what I can do.",
  newSession: "Done: a fresh conversation. I won't use what was said before.",
  unknownCommand: "Unknown command {command}. Send /help for the commands I know.",
  operatorOnly:
    "{command} is for operators only. Your id is {userId}; an operator can admit you with: `laoding operators add {userId} --agent {agentId}`",
  noContext: "Nothing has been sent to the model in this conversation yet.",
  contextHeader: "Last turn's prompt ({total} characters, {skills}):",
  contextSkills: "skills: {skills}",
  contextMcpUnavailable:
    "MCP server {server} is not available ({state}): {reason}; its tools are left out until it starts.",
  contextMcpLeftOut: "{count} MCP tools left out of the request (MCP_MAX_TOOLS_PER_AGENT).",
  feedbackUsage: "Usage: /feedback good|bad [what was right or wrong], about my last answer.",
  feedbackNothing: "There is no answer in this chat to rate yet.",
  feedbackThanks: "Thanks, your rating of my last answer is recorded.",

  // Turns that did not end in the model's answer
  noModel:
    "No model is configured yet, so I can't answer. Set LLM_BASE_URL, LLM_API_KEY and LLM_MODEL in {envFile} (any OpenAI-compatible server works) and restart. Commands (/help) still work.",
  modelFailed: "Sorry, the model service is unavailable right now ({reason}). Please try again later.",
  modelAuth:
    "Sorry, the model service refused the bot's API key; retrying will not help. An operator needs to check LLM_API_KEY (in {envFile}).",
  modelUnreachable:
    "Sorry, I cannot reach the model service. An operator should check LLM_BASE_URL ({baseUrl}) and the network.",
  modelRejected:
    "Sorry, the model service rejected the request ({detail}). An operator should check LLM_MODEL and the other model settings.",
  turnCancelled: "(Cancelled.)",
  turnTimedOut:
    "Sorry, this took longer than {seconds} s, so I stopped. Try again, or ask for less at once. (Operators: see TURN_TIMEOUT_MS, and check the model service.)",
  internalError:
    "Sorry, something went wrong on my side (trace {traceId}). Try again, or give the trace id to an operator.",
  stepBudget: "(I could not finish this within {steps} steps; here is where I got to.)",
  stepBudgetFallback:
    "I ran out of {steps} steps before finishing. What I did: {done}. Ask me to continue, or split the task.",
  emptyAnswer: "(The model gave no answer.)",

  // What went wrong with a model call, by ModelErrorKind (inside the sentences above and the status line)
  modelErrorRateLimit: "rate limit",
  modelErrorServer: "server error",
  modelErrorConnection: "connection failed",
  modelErrorTimeout: "timeout",
  modelErrorAuth: "API key refused",
  modelErrorBadRequest: "request refused",
  modelErrorBadResponse: "unreadable answer",

  // Capability gaps (/capability_gaps, `laoding gaps`)
  gapsHeader: "Capability gaps (last {hours} h, top {count}):",
  gapsNone: "No capability gaps in the last {hours} h.",
  gapsLine: "{index}. {intent} · {reason} · {class} · {count}× · {sessions} · last {last} · {draft}",
  gapsDetail: "{users} · first seen {first}",
  gapsSamples: " · e.g. {samples}",
  gapsSession: "1 session",
  gapsSessions: "{count} sessions",
  gapsUser: "1 user",
  gapsUsers: "{count} users",
  gapsNoDraft: "no draft",
  gapsDrafted: "draft {skill}",
  gapsLinked: "linked to {skill}",
  gapReasonNoSkill: "no skill",
  gapReasonParseFailure: "unreadable model output",
  gapReasonToolFailure: "tool failure",
  gapReasonStepBudget: "out of steps",
  gapReasonModelFailure: "model failure",
  gapReasonReported: "the model said it cannot",
  gapReasonNegativeOutcome: "the user said it was wrong",
  gapClassCapability: "capability",
  gapClassEnvironment: "environment",
  // Environment problems, by cause (store/gap-causes.ts)
  gapsEnvironmentHeader: "Environment problems (last {hours} h; never drafted into skills):",
  gapsEnvironmentLine: "- {cause} · {count}× · last {last}",
  gapsEnvironmentDetail: "first seen {first}{error}",
  gapsEnvironmentError: " · last error: {detail}",
  gapCauseModelUnavailable: "model unavailable (server error or unreachable)",
  gapCauseModelRateLimited: "model rate limited",
  gapCauseModelTimeout: "model timed out",
  gapCauseModelAuthFailed: "model refused the API key",
  gapCauseModelBadRequest: "model refused the request",
  gapCauseModelBadResponse: "model answer unreadable",
  gapCauseSandboxUnavailable: "sandbox unavailable",
  gapCauseToolhostUnavailable: "tool host unavailable",
  gapCauseToolTimeout: "tool timed out",
  gapCauseMcpUnavailable: "MCP server not running",
  gapCauseCommandMissing: "command missing on the host",
  gapCauseOther: "other environment problem",
  minutesAgo: "{count} min ago",
  hoursAgo: "{count} h ago",
  daysAgo: "{count} d ago",

  // /reload_skills
  reloadDone: "Skills reloaded (version {version}, {total} skills).",
  reloadFailed: "Reload failed; the previous skills stay in use: {reason}",
  reloadAdded: "added: {names}",
  reloadChanged: "changed: {names}",
  reloadRemoved: "removed: {names}",
  reloadInvalid: "invalid: {items}",
  reloadUnchanged: "Nothing changed.",

  // /distill_skill and /skill_versions
  distillUsage: "Usage: /distill_skill <tag> (tags: `laoding experiences list`)",
  distillNoLessons: "Nothing written: no live lessons are tagged {tag}.",
  skillNothingWritten: "Nothing written: {why}",
  ratchetDropsBullets: "it drops {lost}% of the previous version's bullets (at most {most}%)",
  ratchetCoversLess: "it covers {after}% of the recorded tasks, the active version {before}%",
  skillDebounced: "a version was written in the last {hours} hours",
  skillRejected: "{skill} v{version} rejected: {why}",
  skillDrafted: "{skill} v{version} drafted ({author}).",
  skillPublished: "{skill} v{version} published ({author}).",
  skillAuthorModel: "model",
  skillAuthorTemplate: "template",
  skillVersionsUsage: "Usage: /skill_versions <distilled-skill> [activate <version>]",
  skillNoVersions: "No versions of {skill}.",
  skillNoSuchVersion: "{skill} has no version {version}; /skill_versions {skill} lists them.",
  skillVersionLive: "{skill} v{version} is live.",
  skillVersionLine: "v{version} {status} · {bullets} bullets · trial {successes}/{uses}",
  skillStatusCandidate: "candidate",
  skillStatusActive: "active",
  skillStatusRejected: "rejected",
  skillStatusRolledBack: "rolled back",
  skillStatusRetired: "retired",

  // Chat channels (Telegram, Feishu)
  databaseDown:
    "I can't reach my database right now. Your message is kept and I will answer it as soon as the database is back.",
  notAllowed:
    "Sorry, I'm not set up to talk with you yet. To get access, give an operator your user id ({userId}) for the allowlist.",
  // Every channel: a message over MESSAGE_MAX_CHARS never reaches the model.
  messageTooLong:
    "Sorry, that message is too long for me ({chars} characters); I can read at most {maxChars} characters at a time. Please shorten it, or split it into several messages.",
  menuHelp: "show help",
  menuNew: "start a fresh conversation",
  menuGaps: "show capability gaps and environment problems (operators)",
  menuReload: "reload skills (operators)",

  // The console's chrome
  consolePrompt: "you> ",
  consoleReply: "bot> ",
  consoleError: "error: {message}",
  logNotice: "{level}: {message} (details: {where})",
  logNoticeWarning: "warning",
  logNoticeError: "error",
  consoleReady:
    "LaodingBot is ready (agent {agentId}, sandbox {sandbox}). Logs: {logDir} (laoding logs). Ctrl-C cancels an answer; Ctrl-C at the prompt or Ctrl-D quits.",
  statusWaiting: "waiting for the model",
  statusRouting: "choosing skills",
  statusThinking: "thinking",
  statusThinkingStep: "thinking (step {step})",
  statusTool: "running {tool}",
  streamToolStatus: "⏳ Running {tool}…",
  streamInterrupted: "⚠️ This answer was cut off when the bot stopped. The full answer follows in a new message.",
  answerInterrupted: "(The answer was cut off: the connection to the model broke ({reason}). Ask again for the rest.)",
  statusRetrying: "the model call failed; retrying, attempt {attempt} of {maxAttempts}",
  statusRetryingKind: "the model call failed ({reason}); retrying, attempt {attempt} of {maxAttempts}",
  statusCancelling: "cancelling (Ctrl-C again to quit)",
  statusCancelHint: "(Ctrl-C to cancel)",
} as const;

export type TextKey = keyof typeof en;
