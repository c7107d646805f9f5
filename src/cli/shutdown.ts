/**
 * Resolves with the first of SIGINT / SIGTERM, then stops listening. Signal listeners
 * do not keep Node's event loop alive, so a timer holds it open until the signal.
 */
export function waitForShutdownSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const keepAlive = setInterval(() => undefined, 1 << 30);
    const onSignal = (signal: NodeJS.Signals) => {
      clearInterval(keepAlive);
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
      resolve(signal);
    };
    process.on("SIGINT", onSignal);
    process.on("SIGTERM", onSignal);
  });
}
