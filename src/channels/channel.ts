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

/** The orchestrator's answer, or undefined when the message was a duplicate. */
export type MessageHandler = (message: IncomingMessage) => Promise<string | undefined>;

export type Channel = {
  readonly name: string;
  /** Runs until the channel ends (end of input, stop()); resolves when it has. */
  run(handler: MessageHandler): Promise<void>;
  stop(): Promise<void>;
};
