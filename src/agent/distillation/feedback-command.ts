/**
 * `/feedback good|bad [text]`: any allowed user rates the chat's last answer. The rating
 * is the strongest outcome label a task can get; it settles the task at once.
 */
import type { ChatCommand } from "../commands/chat-commands.js";
import type { Locale } from "../texts.js";
import type { DistillationLoop } from "./distillation-loop.js";

const WORDS: Record<Locale, { usage: string; nothing: string; thanks: string }> = {
  zh: { usage: "用法：/feedback good|bad [说明]，评价我上一个回答。", nothing: "这个对话里还没有可以评价的回答。", thanks: "谢谢，已记录你对上一个回答的评价。" },
  en: { usage: "Usage: /feedback good|bad [what was right or wrong], about my last answer.", nothing: "There is no answer in this chat to rate yet.", thanks: "Thanks, your rating of my last answer is recorded." },
};

const VERDICTS: Record<string, "good" | "bad"> = { good: "good", bad: "bad", "好": "good", "差": "bad", "+": "good", "-": "bad" };

export function feedbackCommand(loop: Pick<DistillationLoop, "feedback">): ChatCommand {
  return {
    name: "feedback",
    operatorOnly: false,
    help: { zh: "/feedback good|bad [说明] 评价我上一个回答", en: "/feedback good|bad [text] rate my last answer" },
    async run({ args, sessionKey, locale }) {
      const [first = "", ...rest] = args.split(/\s+/);
      const verdict = VERDICTS[first.toLowerCase()];
      if (!verdict) return WORDS[locale].usage;
      const settled = await loop.feedback(sessionKey, verdict, rest.join(" ").trim());
      return settled ? WORDS[locale].thanks : WORDS[locale].nothing;
    },
  };
}
