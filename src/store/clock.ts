/** Time as a collaborator, so tests can move it. */
export type Clock = { now(): number };
export const systemClock: Clock = { now: () => Date.now() };
