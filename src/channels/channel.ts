/**
 * The channel seam. A channel turns its platform's updates into IncomingMessage, hands
 * them to a MessageHandler (the orchestrator, which it never imports) and delivers the
 * answer. Console, Telegram and Feishu share it; the chat platforms plug in through
 * ChatPlatform (chat-platform.ts) behind the chat gateway.
 */
export type ChatType = "private" | "group";

export type IncomingMessage = {
  channel: string;
  chatId: string;
  userId: string;
  /** The channel's id of the message, used to drop re-deliveries. */
  messageId?: string;
  /** Taken up again from the inbox after the run that began answering it stopped: the orchestrator finishes that turn instead of dropping it as a duplicate. */
  resumed?: boolean;
  text: string;
  agentId: string;
  /** Operators may run operator commands (the console user always is one). */
  isOperator: boolean;
  userName?: string;
  /** Private (one user and the bot) or a group; the console is private. */
  chatType?: ChatType;
  /** The bot was @mentioned, replied to, or addressed by a command with its name. */
  mentionedBot?: boolean;
  /** The message this one answers (the platform's id). */
  replyToMessageId?: string;
  /** Topic / thread inside the chat (Telegram forum topic, Feishu thread). */
  threadId?: string;
};

/** An answer on its way out: where it goes and what it says (Markdown, as the model wrote it). */
export type OutgoingReply = {
  chatId: string;
  text: string;
  /** Answer as a reply to this message (the platform's id). */
  replyTo?: string;
  threadId?: string;
  /**
   * The live preview this part replaces (PreviewSurface.ref): the platform edits that
   * message (or closes that card) to this text instead of sending a new one, and sends a
   * new message when the preview can no longer be edited. Only ever on a reply's first part.
   */
  editRef?: string;
};

/** What the bot is doing during a turn: the console shows it, chat channels keep "typing". */
export type TurnProgress =
  | { state: "routing" }
  | { state: "thinking"; step: number }
  | { state: "tool"; tool: string }
  | { state: "retrying"; attempt: number; maxAttempts: number; reason: string };

/** How a channel steers one turn: cancel it (Ctrl-C, shutdown) and watch its progress. */
export type TurnControl = {
  signal?: AbortSignal;
  onProgress?: (progress: TurnProgress) => void;
  /**
   * The answer as the person should see it so far: each call carries the whole text
   * (Markdown as the model writes it, citation lines held back and removed), never routing
   * JSON or tool calls. "" when what was shown turned out not to be the answer (the model
   * went on to call a tool). Set by a channel that streams replies; the final answer is
   * still the handler's return value, and only that is stored and delivered.
   */
  onAnswer?: (text: string) => void;
};

/** The orchestrator's answer, or undefined when the message was a duplicate. */
export type MessageHandler = (message: IncomingMessage, control?: TurnControl) => Promise<string | undefined>;

export type Channel = {
  readonly name: string;
  /** Runs until the channel ends (end of input, stop()); resolves when it has. */
  run(handler: MessageHandler): Promise<void>;
  stop(): Promise<void>;
};
