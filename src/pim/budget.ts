// Keyed by the headers object of one GraphQL request: every layer of the client passes the first
// caller's headers object on unchanged (telemetry's traced copy keeps the budget, see keepBudget).
const deadlines = new WeakMap<object, number>();

/**
 * Starts the overall budget of one GraphQL request's upstream work. It is a deadline, not a
 * timer: each upstream call gets at most what is left of it as its own timeout (client.ts), and
 * a retry that cannot finish inside it is not tried, so nothing per request waits to fire.
 */
export function startBudget(headers: Record<string, string>, budgetMs: number): void {
  deadlines.set(headers, Date.now() + budgetMs);
}

/** Milliseconds left of the budget of the request that sent `headers`; Infinity without one. */
export function remainingBudgetMs(headers: Record<string, string>): number {
  const deadline = deadlines.get(headers);
  return deadline === undefined ? Infinity : Math.max(0, deadline - Date.now());
}

/** Gives a copy of a request's headers the same deadline as the original. */
export function keepBudget(from: Record<string, string>, to: Record<string, string>): void {
  const deadline = deadlines.get(from);
  if (deadline !== undefined) deadlines.set(to, deadline);
}
