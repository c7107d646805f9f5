/**
 * When to restart a crashed child. Like vscode-languageclient (no restart after the 5th
 * crash within 3 minutes) plus what it lacks: exponential back-off with jitter between
 * restarts, and a cool-down after which one probe start is allowed.
 */
export type RestartPolicyOptions = {
  /** Crashes within `windowMs` that put the child into the failed state. */
  maxCrashes: number;
  windowMs: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** Time in the failed state before a probe start is allowed. */
  coolDownMs: number;
  random?: () => number;
};

export type RestartDecision = { action: "restart"; delayMs: number } | { action: "give-up"; retryAfterMs: number };

export class RestartPolicy {
  private crashes: number[] = [];
  private blamed: number[] = [];
  private readonly random: () => number;

  constructor(private readonly options: RestartPolicyOptions) {
    this.random = options.random ?? Math.random;
  }

  /** Records a crash at `now` and decides what happens next. */
  onCrash(now: number): RestartDecision {
    this.crashes = this.crashes.filter((time) => now - time < this.options.windowMs);
    this.crashes.push(now);
    if (this.crashes.length >= this.options.maxCrashes)
      return { action: "give-up", retryAfterMs: this.options.coolDownMs };
    const exponential = Math.min(this.options.maxDelayMs, this.options.baseDelayMs * 2 ** (this.crashes.length - 1));
    // Full jitter in the upper half: spreads restarts without making them instant.
    return { action: "restart", delayMs: Math.round(exponential * (0.5 + this.random() * 0.5)) };
  }

  /**
   * A crash a call in flight can be blamed for: restarted with back-off, but never
   * counted toward giving up, so one user's bad request cannot take the agent down for
   * everyone (the client quarantines the request instead).
   */
  onBlamedCrash(now: number): RestartDecision {
    this.blamed = this.blamed.filter((time) => now - time < this.options.windowMs);
    this.blamed.push(now);
    const exponential = Math.min(
      this.options.maxDelayMs,
      this.options.baseDelayMs * 2 ** Math.min(this.blamed.length - 1, 16),
    );
    return { action: "restart", delayMs: Math.round(exponential * (0.5 + this.random() * 0.5)) };
  }

  /** A probe start succeeded and stayed up: forget old crashes. */
  reset(): void {
    this.crashes = [];
    this.blamed = [];
  }

  get recentCrashes(): number {
    return this.crashes.length;
  }
}
