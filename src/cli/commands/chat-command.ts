import { bootstrap } from "../bootstrap.js";
import { writeLine, type Command } from "../cli-context.js";
import { parseFlags, WORKSPACE_FLAG } from "../parse-flags.js";
import { isTerminal, serveConsole } from "./start-command.js";

const usage = `Usage: laoding chat [--agent ID] [--workspace DIR]

Talks to an agent in the terminal. Interactive on a TTY (history, a status line while
the bot works, the answer printed as it is written unless STREAM_REPLIES turns the
console off, Ctrl-C cancels an answer, Ctrl-C at the prompt or Ctrl-D quits);
otherwise reads one message per line, prints each reply and exits at end of input,
stdout carrying only the replies:

  echo "/help" | laoding chat

Logs go to LOG_DIR (read them with \`laoding logs\`); to stderr as JSON only with
LOG_LEVEL set in the environment or under systemd (docs/deployment.md).

Options:
  --agent ID        the agent to talk to (default: the first in agents.json)
${WORKSPACE_FLAG.help()}
  -h, --help        show this help`;

export const chatCommand: Command = {
  name: "chat",
  summary: "talk to an agent in the terminal (scriptable when stdin is not a TTY)",
  usage,
  async run(context) {
    const { values } = parseFlags(context.args, { agent: { type: "string" }, ...WORKSPACE_FLAG.option }, usage);
    if (values.help) return (writeLine(context.stdout, usage), 0);
    const boot = bootstrap(context, {
      seed: true,
      workspaceDir: values.workspace,
      logRouting: { interactive: () => isTerminal(context) },
    });
    return serveConsole(context, boot, values.agent ?? (boot.agents[0]?.id as string));
  },
};
