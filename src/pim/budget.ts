import { pimError } from './errors.ts';

// Keyed by the signal and by the request's headers object: the coalescing layer gives a shared
// call a signal of its own, but every layer passes the first caller's headers object on unchanged.
const deadlines = new WeakMap<object, number>();
const controllers = new WeakMap<AbortSignal, AbortController>();

/**
 * The overall budget of one GraphQL request: a signal aborted when the caller goes away or when
 * `budgetMs` have passed. On the budget's expiry its reason is an UPSTREAM_TIMEOUT PimError, so
 * every upstream call still pending fails with that code instead of an internal error.
 */
export function createBudgetSignal(
  caller: AbortSignal | undefined,
  budgetMs: number,
  headers?: Record<string, string>,
): AbortSignal {
  const controller = new AbortController();
  const signal = caller ? AbortSignal.any([caller, controller.signal]) : controller.signal;
  // The timer holds the controller only weakly, and the signal holds it strongly: a finished
  // request's budget is collected with it instead of piling up until its timer fires.
  controllers.set(signal, controller);
  const weak = new WeakRef(controller);
  const spent = () => weak.deref()?.abort(pimError('UPSTREAM_TIMEOUT', new Error(`budget of ${budgetMs} ms spent`)));
  const timer = setTimeout(spent, budgetMs);
  // The budget must never keep the process alive on its own. No abort listener clears it: Node
  // keeps a composite signal with listeners alive until it aborts, which is the pile-up again.
  timer.unref();
  deadlines.set(signal, Date.now() + budgetMs);
  if (headers) deadlines.set(headers, Date.now() + budgetMs);
  return signal;
}

/** Milliseconds left of the budget behind `signal` or `headers`; Infinity when neither has one. */
export function remainingBudgetMs(signal: AbortSignal | undefined, headers?: Record<string, string>): number {
  const deadline = (signal && deadlines.get(signal)) ?? (headers && deadlines.get(headers));
  return deadline === undefined ? Infinity : Math.max(0, deadline - Date.now());
}
