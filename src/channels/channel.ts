/**
 * The channel seam. A channel turns its platform's updates into IncomingMessage, hands
 * them to a MessageHandler (the orchestrator, which it never imports) and delivers the
 * answer. Telegram and Feishu plug in here without touching the orchestrator.
 */
export type IncomingMessage = {
  channel: string;
  chatId: string;
  userId: string;
  /** The channel's id of the message, used to drop re-deliveries. */
  messageId?: string;
  text: string;
  agentId: string;
  /** Operators may run operator commands (the console user always is one). */
  isOperator: boolean;
  userName?: string;
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
};

/** The orchestrator's answer, or undefined when the message was a duplicate. */
export type MessageHandler = (message: IncomingMessage, control?: TurnControl) => Promise<string | undefined>;

export type Channel = {
  readonly name: string;
  /** Runs until the channel ends (end of input, stop()); resolves when it has. */
  run(handler: MessageHandler): Promise<void>;
  stop(): Promise<void>;
};
