/**
 * `/feedback good|bad [text]`: any allowed user rates the chat's last answer. The rating
 * is the strongest outcome label a task can get; it settles the task at once.
 */
import type { ChatCommand } from "../commands/chat-commands.js";
import { text } from "../texts.js";
import type { DistillationLoop } from "./distillation-loop.js";

const VERDICTS: Record<string, "good" | "bad"> = {
  good: "good",
  bad: "bad",
  好: "good",
  差: "bad",
  "+": "good",
  "-": "bad",
};

export function feedbackCommand(loop: Pick<DistillationLoop, "feedback">): ChatCommand {
  return {
    name: "feedback",
    operatorOnly: false,
    help: "helpFeedback",
    async run({ args, sessionKey, locale }) {
      const [first = "", ...rest] = args.split(/\s+/);
      const verdict = VERDICTS[first.toLowerCase()];
      if (!verdict) return text(locale, "feedbackUsage");
      const settled = await loop.feedback(sessionKey, verdict, rest.join(" ").trim());
      return text(locale, settled ? "feedbackThanks" : "feedbackNothing");
    },
  };
}
