import type { Dispatcher } from 'undici';
import { budgetSpent, pimError, shuttingDown } from '../rest/errors.ts';
import type { JoinedShares } from '../rest/types.ts';
import type { FairQueue, QueueKey, Release } from './fair-queue.ts';

/** What the admission interceptor reads from a call's dispatch options, besides undici's own. */
export interface AdmissionDispatchOptions {
  /** Epoch ms by which the GraphQL request's upstream work must be done. */
  deadline: number;
  /** The call's own time once it leaves the queue; unset, `requestTimeoutMs`. */
  timeoutMs?: number | undefined;
  /** Fair-queue partition; unset, the call's credential partition. */
  queueKey?: string | undefined;
  /** Share inside the partition (the GraphQL request or client address); unset, the partition is one share. */
  queueShare?: string | undefined;
  /** The call's credential partition, computed once per GraphQL request; the queue key when `queueKey` is unset. */
  partition?: string | undefined;
  /** Shares of other requests waiting on this call (coalescing): the queue serves it in the best of them. */
  joined?: JoinedShares | undefined;
  /**
   * Set once the call leaves the queue for the socket: an answer without it came from the HTTP cache. `confirmed`:
   * the PIM answered 304, and the HTTP cache replays its stored answer (with the Age it had before); `confirmation`,
   * that 304's own header fields, which update the stored ones (RFC 9111 §4.3.4).
   */
  sent?:
    | {
        wire: boolean;
        /** When it left the queue (performance.now()): the PIM's latency counts from here (steps/telemetry.ts). */
        sentAt?: number;
        /**
         * The same on the wall clock a 401 is timed by (steps/stale.ts), read then: worked out from `sentAt` alone once
         * the answer came, a clock stepped forward meanwhile moved it past a 401 heard in between (send.ts takes both).
         */
        sentAtEpoch?: number;
        confirmed?: boolean;
        confirmation?: Readonly<Record<string, unknown>> | undefined;
      }
    | undefined;
}

export interface AdmissionOptions {
  queue: FairQueue;
  /** The queue key of a dispatch that carries neither `queueKey` nor `partition` (none of the client's). */
  keyOf: (headers: Record<string, string>) => string;
  /** Deadline of one upstream call from the moment it is sent. */
  requestTimeoutMs: number;
  /**
   * Asked as each call leaves the queue: an error ends it there, unsent. The breaker (steps/breaker.ts)
   * decided before the call queued, and may have opened while it waited.
   */
  stop?: () => Error | undefined;
  /**
   * Aborted as the shutdown's grace is about to end: each call the PIM has not begun to answer then ends for its
   * caller (BUDGET_EXCEEDED, or a kept copy where stale serving has one), which is answered rather than cut.
   */
  shutdown?: AbortSignal | undefined;
}

/**
 * An undici interceptor that admits upstream calls through the fair queue. Composed inside the
 * cache interceptor, so cache hits never queue. A call's own deadline starts when it leaves the
 * queue, so waiting there is never blamed on the upstream; the request budget bounds both.
 */
export function createAdmission({ queue, keyOf, requestTimeoutMs, stop, shutdown }: AdmissionOptions) {
  // The calls out of the queue and not yet ended, each for as long as it holds its slot.
  const out = new Set<TimedHandler>();
  shutdown?.addEventListener('abort', () => {
    for (const call of out) call.leave(shuttingDown());
  });
  return (dispatch: Dispatcher.Dispatch): Dispatcher.Dispatch =>
    (opts, handler) => {
      const own = opts as typeof opts & Partial<AdmissionDispatchOptions> & { signal?: AbortSignal };
      // A dispatch that carries no budget (none of ours should) gets one call's time in all.
      const deadline = own.deadline ?? Date.now() + requestTimeoutMs;
      const { signal } = own;
      const partition = own.queueKey ?? own.partition ?? keyOf((opts.headers ?? {}) as Record<string, string>);
      const key: QueueKey = { partition, share: own.queueShare ?? partition };
      queue.acquire(key, deadline, signal, own.joined).then(
        (release) => {
          const left = deadline - Date.now();
          if (left <= 0) return refuse(handler, budgetSpent(), release);
          const stopped = stop?.();
          if (stopped) return refuse(handler, stopped, release);
          const timed: TimedHandler = timedHandler(
            handler,
            { budgetMs: left, timeoutMs: own.timeoutMs ?? requestTimeoutMs },
            () => (out.delete(timed), release()),
            own.sent,
          );
          out.add(timed);
          if (own.sent) [own.sent.wire, own.sent.sentAt, own.sent.sentAtEpoch] = [true, performance.now(), Date.now()];
          try {
            dispatch(opts, timed);
          } catch (error) {
            // Thrown by the dispatch or a handler callback: the call is over, so its slot must come back.
            timed.fail(error as Error);
          }
        },
        (error: Error) => refuse(handler, error),
      );
      return true;
    };
}

// A call that never left the queue still ends the way every dispatch does: start, then error.
function refuse(handler: Dispatcher.DispatchHandler, error: Error, release?: Release) {
  release?.();
  const controller: Dispatcher.DispatchController = {
    aborted: true,
    paused: false,
    reason: error,
    abort: () => undefined,
    pause: () => undefined,
    resume: () => undefined,
  };
  tell(handler, error, () => handler.onRequestStart?.(controller, {}), controller);
}

// The handler's error path; one that throws while told of its own failure has nothing left to hear.
function tell(
  handler: Dispatcher.DispatchHandler,
  error: Error,
  start: () => void,
  controller: Dispatcher.DispatchController,
) {
  try {
    start();
    handler.onResponseError?.(controller, error);
  } catch {
    // Nothing is held here any more, and an exception would only become an unhandled rejection.
  }
}

type TimedHandler = Dispatcher.DispatchHandler & {
  fail(error: Error): void;
  /** Ends the call for its caller now, as its leaving does (see Leavable), unless its answer is already coming. */
  leave(reason: Error): void;
};

/**
 * Passes every event on; ends the call when its time passes and frees the slot when it ends. The call has
 * `timeoutMs` from now, unless the request's budget (`budgetMs` left) ends first: then its caller hears
 * BUDGET_EXCEEDED (the PIM was not given its full time: not its fault), and a call already sent keeps its slot
 * while the PIM still works on it, as when its caller leaves (see Leavable), until its own time is up.
 */
function timedHandler(
  handler: Dispatcher.DispatchHandler,
  { budgetMs, timeoutMs }: { budgetMs: number; timeoutMs: number },
  release: Release,
  sent?: AdmissionDispatchOptions['sent'],
): TimedHandler {
  let controller: Dispatcher.DispatchController | undefined;
  // What the handler is given in place of `controller` (see Leavable).
  let facing: Leavable | undefined;
  let expired: Error | undefined;
  let ended = false;
  let failed = false;
  // The handler heard the call's end before undici started it (still connecting): undici's own start and end, later,
  // are not news to it; the slot is held until that end.
  let told = false;
  // Ends the call for its caller: at once, with the start undici has not made yet, if it is still connecting.
  const endWith = (error: Error) => {
    expired = error;
    if (controller) return controller.abort(error);
    if (told) return;
    told = true;
    refuse(handler, error);
  };
  const timedOut = () => endWith(pimError('UPSTREAM_TIMEOUT', new Error(`upstream call exceeded ${timeoutMs} ms`)));
  let timer = setTimeout(
    () => {
      if (budgetMs >= timeoutMs) return timedOut();
      if (facing?.sent && !facing.answered) {
        facing.abort(budgetSpent());
        timer = setTimeout(timedOut, timeoutMs - budgetMs);
        return;
      }
      endWith(budgetSpent());
    },
    Math.min(budgetMs, timeoutMs),
  );
  const end = () => {
    if (ended) return;
    ended = true;
    clearTimeout(timer);
    release();
  };
  return {
    /** Ends a call whose dispatch threw: frees the slot, and tells the handler unless it already heard the end. */
    fail(error) {
      const heard = ended || told;
      failed = true;
      end();
      controller?.abort(error);
      if (heard) return;
      if (controller) tell(handler, error, () => undefined, facing ?? controller);
      else refuse(handler, error);
    },
    leave(reason) {
      if (ended) return;
      // An answer already coming is read to its end: only a call the PIM has not answered yet is left.
      if (facing) return void (facing.answered || facing.abort(reason));
      endWith(reason);
    },
    onRequestStart(c, context) {
      controller = c;
      if (told) return c.abort(expired!);
      facing = new Leavable(c, (reason) => handler.onResponseError?.(facing!, reason));
      handler.onRequestStart?.(facing, context);
      if (expired) c.abort(expired);
      facing.sent = true;
    },
    onRequestUpgrade: (_c, ...args) => handler.onRequestUpgrade?.(facing!, ...args),
    onResponseStart(c, statusCode, ...rest) {
      // An informational answer (103 Early Hints) is not the answer: the PIM is still at work. Not passed on: the HTTP
      // cache's revalidation takes any first status for the final one (a 103, then asserts on the 304 after it), and
      // nothing above reads one.
      if (statusCode < 200) return;
      // The PIM has done the work its caller left: the connection closes rather than read an answer nobody takes.
      if (facing!.left) return c.abort(facing!.left);
      facing!.answered = true;
      // Per answer: a 304 that cannot confirm the stored copy is followed by a whole answer on the same call.
      if (sent) {
        sent.confirmed = statusCode === 304;
        sent.confirmation = statusCode === 304 ? rest[0] : undefined;
      }
      handler.onResponseStart?.(facing!, statusCode, ...rest);
    },
    onResponseData: (_c, chunk) => handler.onResponseData?.(facing!, chunk),
    onResponseEnd(_c, trailers) {
      end();
      handler.onResponseEnd?.(facing!, trailers);
    },
    onResponseError(c, error) {
      // After fail() the handler has already heard this call's end; the abort's echo is not news. A caller that
      // left heard it then.
      if ((ended && failed) || told || facing?.left) return end();
      end();
      handler.onResponseError?.(facing ?? c, error);
    },
  };
}

/**
 * The controller the caller's side sees. A caller that leaves (its signal, or coalescing's once the last joiner
 * left) after the request went out and before the PIM answered does not close the connection: the PIM would go on
 * working on a request nobody can answer, outside PIM_MAX_CONCURRENCY (most servers notice a closed connection
 * only when they write). The caller hears its end at once (`leave`); the call keeps its slot until the PIM answers,
 * fails or runs out of time. Any other abort (nothing sent yet, or the answer's body unwanted) closes it.
 */
// A class, not an object literal: its getters and methods are shared, not eight closures made for every call.
class Leavable implements Dispatcher.DispatchController {
  sent = false;
  answered = false;
  /** Why the caller left before the answer, if it did. */
  left: Error | undefined = undefined;
  readonly #controller: Dispatcher.DispatchController;
  readonly #leave: (reason: Error) => void;
  constructor(controller: Dispatcher.DispatchController, leave: (reason: Error) => void) {
    this.#controller = controller;
    this.#leave = leave;
  }
  abort(reason: Error) {
    if (this.left) return;
    if (!this.sent || this.answered) return this.#controller.abort(reason);
    this.#leave((this.left = reason));
  }
  pause() {
    this.#controller.pause();
  }
  resume() {
    this.#controller.resume();
  }
  get aborted() {
    return this.left !== undefined || this.#controller.aborted;
  }
  get paused() {
    return this.#controller.paused;
  }
  get reason() {
    return this.left ?? this.#controller.reason;
  }
  get rawHeaders() {
    return this.#controller.rawHeaders;
  }
  get rawTrailers() {
    return this.#controller.rawTrailers;
  }
}
