import { budgetSpent, PimError } from '../rest/errors.ts';
import type { Answer, CallOptions, JoinedShares, Layer } from '../rest/types.ts';
import { trialOut } from './breaker.ts';
import { waitToRetry, type RetryOptions } from './retry.ts';

interface Flight {
  result: Promise<Answer>;
  controller: AbortController;
  waiters: number;
  settled: boolean;
  /** The first caller's deadline, which bounds the shared call (a background refresh's is its own, longer). */
  deadline: number;
  /** Epoch ms the call went out: one sent before an invalidation of its path is joined by nobody after it. */
  sentAt: number;
  /** Lends the flight a joiner's queue share, so it is not served later than the joiner's own call. */
  join(call: CallOptions): void;
  /** Takes back what `join` lent, once the joiner leaves. */
  unjoin(call: CallOptions): void;
  /**
   * Whether the breaker has let the call through (CallOptions.onLetThrough), and who to tell then: the waiters that
   * asked again and count their own wait for a half-open trial (rare, so made only for them).
   */
  letThrough: { done: boolean; listeners?: Set<() => void> };
}

// The shares of a flight's joiners (each with its joiners waiting), told to the queue (admission) while the call waits.
function joinedShares(first: CallOptions): JoinedShares & Pick<Flight, 'join' | 'unjoin'> {
  const shares = new Map<string, number>();
  const listeners: Array<{ join: (share: string) => void; leave: (share: string) => void }> = [];
  // A share counts only in the queue partition the call waits in (the readiness probe has its own).
  const lent = ({ queueKey, queueShare }: CallOptions) => (queueKey === first.queueKey ? queueShare : undefined);
  return {
    listen(join, leave) {
      listeners.push({ join, leave });
      for (const share of shares.keys()) join(share);
    },
    join(call) {
      const share = lent(call);
      if (share === undefined) return;
      const joiners = shares.get(share) ?? 0;
      shares.set(share, joiners + 1);
      if (joiners === 0) for (const listener of listeners) listener.join(share);
    },
    unjoin(call) {
      const share = lent(call);
      const joiners = share === undefined ? undefined : shares.get(share);
      if (joiners === undefined) return;
      if (joiners > 1) return void shares.set(share!, joiners - 1);
      shares.delete(share!);
      for (const listener of listeners) listener.leave(share!);
    },
  };
}

/**
 * Creates the step that lets concurrent identical GETs of one credential partition share one
 * upstream call while it is in flight. Waiters leave on their own abort signal; the shared call
 * is aborted only when the last waiter has left, and its result or error goes to everyone still waiting.
 */
export function createCoalescing({
  invalidatedSince = () => 0,
  shutdown,
  trialWaitMs = Infinity,
}: Pick<RetryOptions, 'shutdown'> & {
  /** Epoch ms of the latest invalidation of a request path (POST /cache/invalidate). */
  invalidatedSince?: (path: string) => number;
  /** How long a call waits for a half-open breaker's trial (the breaker's own bound, PIM_TIMEOUT_MS). */
  trialWaitMs?: number;
} = {}): Layer {
  return (next) => {
    const flights = new Map<string, Flight>();

    const start = (key: string, ...[request, call]: Parameters<typeof next>): Flight => {
      const controller = new AbortController();
      const joined = joinedShares(call);
      // Called inside `next` below, before `flight` exists, when the breaker is closed.
      const letThrough: Flight['letThrough'] = { done: false };
      const onLetThrough = () => {
        if (letThrough.done) return;
        letThrough.done = true;
        letThrough.listeners?.forEach((listener) => listener());
      };
      let result: Promise<Answer>;
      try {
        // The first caller's budget bounds the shared call; every waiter gets its one Answer.
        result = next(request, { ...call, signal: controller.signal, joined, onLetThrough });
      } catch (error) {
        result = Promise.reject(error);
      }
      const flight: Flight = {
        result,
        controller,
        waiters: 0,
        settled: false,
        deadline: call.deadline,
        sentAt: Date.now(),
        join: joined.join,
        unjoin: joined.unjoin,
        letThrough,
      };
      const settle = () => {
        flight.settled = true;
        if (flights.get(key) === flight) flights.delete(key);
      };
      // Also marks the rejection handled when every waiter has already left.
      result.then(settle, settle);
      flights.set(key, flight);
      return flight;
    };

    const leave = (key: string, flight: Flight, reason: unknown) => {
      flight.waiters -= 1;
      if (flight.waiters > 0 || flight.settled) return;
      // Nobody wants the answer any more: free the connection, and let the next caller start afresh.
      if (flights.get(key) === flight) flights.delete(key);
      flight.controller.abort(reason);
    };

    // `askedAgain`: a joiner's second try (below), which takes the next verdict as it is. `waitingSince`: when that
    // joiner began waiting for a half-open breaker's trial, which it waits for PIM_TIMEOUT_MS in all, not once more.
    const coalesced = (
      request: Parameters<typeof next>[0],
      call: CallOptions,
      askedAgain = false,
      waitingSince?: number,
    ): Promise<Answer> => {
      const { signal } = call;
      if (signal?.aborted) return Promise.reject(signal.reason);
      // A call of a key the PIM had not accepted waits in the unproven keys' queue share: a request of that key made
      // once the PIM accepted it does not join it there (it would wait behind made-up keys), it sends its own.
      const queued = call.queueKey === undefined || call.queueKey === call.partition ? '' : `${call.queueKey}\0`;
      const key = `${queued}${call.partition} ${request.path}`;
      let flight = flights.get(key);
      // A call that went out before the path was purged reads what the purge ended: a new one goes instead.
      if (flight && invalidatedSince(request.path) >= flight.sentAt) flight = undefined;
      const joining = flight !== undefined;
      const joinedAt = joining ? Date.now() : 0;
      if (flight) flight.join(call);
      else flight = start(key, request, call);
      flight.waiters += 1;
      // The shared call is the first request's: refused by that request's own byte limit (it read too much besides),
      // out of its budget before a joiner's, or failed where it could not wait to retry (retry.ts) and the joiner
      // can, it is no verdict on a joiner, which asks again, once (after that wait), shared with the other joiners
      // still waiting. A page too large for any request, a process or credential that holds too much, are verdicts for all.
      const result = joining
        ? flight.result.catch(async (error: unknown) => {
            if (!(error instanceof PimError) || askedAgain || signal?.aborted) throw error;
            const standIn = call.standIn === true || (error.unwaitedMs !== undefined && (await call.findStandIn?.()));
            const wait = standIn ? undefined : error.unwaitedMs;
            const left = call.deadline - Date.now();
            const notMine =
              error.requestLimit === true ||
              (error.code === 'BUDGET_EXCEEDED' && call.deadline > flight.deadline) ||
              (wait !== undefined && wait < left);
            // Nor is anything asked again once the shutdown has let go of the calls.
            if (!notMine || left <= 0 || shutdown?.aborted) throw error;
            // Asked at once when the shared call stopped waiting for the breaker's trial: waiting since it joined.
            if (!wait) return coalesced(request, call, true, error.unwaitedMs === 0 ? joinedAt : undefined);
            return waitToRetry(wait, error, signal, shutdown).then(() => coalesced(request, call, true));
          })
        : flight.result;
      // A joiner whose budget ends before the shared call's (a background refresh has twice a call's time) leaves then.
      const outlived = call.deadline < flight.deadline;
      // Its own end of waiting for the trial, unless the breaker lets the call through first. Not the shared call's:
      // another waiter, joined later, may wait longer.
      const trialLeftMs =
        waitingSince === undefined || flight.letThrough.done ? undefined : trialWaitMs - (Date.now() - waitingSince);
      if (!signal && !outlived && trialLeftMs === undefined) return result;
      return new Promise<Answer>((resolve, reject) => {
        let timer: NodeJS.Timeout | undefined;
        let trialTimer: NodeJS.Timeout | undefined;
        const through = () => clearTimeout(trialTimer);
        const done = () => {
          signal?.removeEventListener('abort', onAbort);
          clearTimeout(timer);
          clearTimeout(trialTimer);
          flight.letThrough.listeners?.delete(through);
        };
        const quit = (reason: unknown) => {
          done();
          if (joining) flight.unjoin(call);
          leave(key, flight, reason);
          reject(reason);
        };
        const onAbort = () => quit(signal!.reason);
        signal?.addEventListener('abort', onAbort, { once: true });
        if (outlived) timer = setTimeout(() => quit(budgetSpent()), Math.max(0, call.deadline - Date.now()));
        if (trialLeftMs !== undefined && Number.isFinite(trialLeftMs)) {
          trialTimer = setTimeout(() => quit(trialOut()), Math.max(0, trialLeftMs));
          (flight.letThrough.listeners ??= new Set()).add(through);
        }
        result.then(
          (value) => (done(), resolve(value)),
          (error: unknown) => (done(), reject(error)),
        );
      });
    };
    return (request, call) => coalesced(request, call);
  };
}
