/**
 * Work that may finish now or later. The child answers a call that needed no waiting in
 * the same turn it arrived (server/rpc-endpoint.ts says why), so the steps around a tool
 * stay synchronous for a synchronous result and only become promises for a promise.
 */
export type MaybePromise<T> = T | Promise<T>;

/** Like `promise.then(onValue, onError)`, but synchronous when `work` is: a throw of `work` goes to `onError`. */
export function andThen<T, R>(
  work: () => MaybePromise<T>,
  onValue: (value: T) => MaybePromise<R>,
  onError: (error: unknown) => MaybePromise<R>,
): MaybePromise<R> {
  let outcome: MaybePromise<T>;
  try {
    outcome = work();
  } catch (error) {
    return onError(error);
  }
  return outcome instanceof Promise ? outcome.then(onValue, onError) : onValue(outcome);
}

/** Like `promise.then(next)`, synchronous for a value. */
export function mapMaybe<T, R>(value: MaybePromise<T>, next: (value: T) => R): MaybePromise<R> {
  return value instanceof Promise ? value.then(next) : next(value);
}

/** Like `promise.finally(always)`: `always` runs once `work` is done, however it ends. */
export function andFinally<T>(work: () => MaybePromise<T>, always: () => void): MaybePromise<T> {
  let outcome: MaybePromise<T>;
  try {
    outcome = work();
  } catch (error) {
    always();
    throw error;
  }
  if (outcome instanceof Promise) return outcome.finally(always);
  always();
  return outcome;
}
