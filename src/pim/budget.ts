import { pimError } from './errors.ts';

const deadlines = new WeakMap<AbortSignal, number>();

/**
 * The overall budget of one GraphQL request: a signal aborted when the caller goes away or when
 * `budgetMs` have passed. On the budget's expiry its reason is an UPSTREAM_TIMEOUT PimError, so
 * every upstream call still pending fails with that code instead of an internal error.
 */
export function createBudgetSignal(caller: AbortSignal | undefined, budgetMs: number): AbortSignal {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(pimError('UPSTREAM_TIMEOUT', new Error(`operation budget of ${budgetMs} ms spent`))),
    budgetMs,
  );
  // The budget must never keep the process alive on its own.
  timer.unref();
  const signal = caller ? AbortSignal.any([caller, controller.signal]) : controller.signal;
  signal.addEventListener('abort', () => clearTimeout(timer), { once: true });
  deadlines.set(signal, Date.now() + budgetMs);
  return signal;
}

/** Milliseconds left of the budget behind `signal`; Infinity for a signal without one. */
export function remainingBudgetMs(signal: AbortSignal | undefined): number {
  const deadline = signal ? deadlines.get(signal) : undefined;
  return deadline === undefined ? Infinity : Math.max(0, deadline - Date.now());
}
