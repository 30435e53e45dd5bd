import { BrokenCircuitError, CircuitState, circuitBreaker, handleWhen, type IBreaker } from 'cockatiel';
import { budgetSpent, isUpstreamAnswer, PimError, pimError, type PimErrorCode } from '../rest/errors.ts';
import { waitToRetry, type RetryOptions } from './retry.ts';
import { isFaultyAnswer, isProbeAnswer } from './upstream-faults.ts';
import { createUpstreamLog, type StateLogger } from './upstream-log.ts';
import type { Answer, CallOptions, Layer, Send, UpstreamStatus } from '../rest/types.ts';

/** The breaker refused the call (open, or half-open with its trial out): it never reached the PIM. */
export const refusedByBreaker = (error: unknown) =>
  error instanceof PimError && error.code === 'UPSTREAM_UNAVAILABLE' && error.cause instanceof BrokenCircuitError;

/** The retry settings (retry.ts) travel with the breaker's: one configuration group. */
export interface ResilienceOptions extends Omit<RetryOptions, 'onRetry' | 'shutdown'> {
  /** Consecutive upstream failures after which the breaker sends its probe; it opens if that fails too. */
  breakerThreshold: number;
  /** Time the breaker stays open before it lets one trial call through (half-open). */
  halfOpenAfterMs: number;
}

/** What the policies report; not configuration. */
export interface ResilienceHooks {
  /** Told of each retry of `request` that was an attempt at the PIM. */
  onRetry?: RetryOptions['onRetry'];
  /** Told when the breaker opens or closes and when the upstream stops or starts answering. */
  logger?: StateLogger | undefined;
}

/** Failures that say the upstream itself is unwell; these feed the breaker. */
const faultCodes = new Set<PimErrorCode>(['UPSTREAM_ERROR', 'UPSTREAM_TIMEOUT', 'UPSTREAM_UNAVAILABLE']);
// No Isolated: only breaker.isolate() enters it, and nothing calls that.
const breakerStates = {
  [CircuitState.Closed]: 'closed',
  [CircuitState.Open]: 'open',
  [CircuitState.HalfOpen]: 'half-open',
} as const;

/** Every state the breaker can report, as metrics label it. */
export const breakerStateNames = Object.values(breakerStates);

// An answer is the upstream's own verdict on one request, whatever code it maps to: it says the
// upstream is up. Counting them would let one client open the breaker for everyone with bad URLs.
const isFault = (error: unknown) => error instanceof PimError && faultCodes.has(error.code) && !isUpstreamAnswer(error);

const PROBE_INTERVAL_MS = 1_000;

/**
 * Rejects when the call's budget runs out (BUDGET_EXCEEDED), its caller leaves, or `waitMs` passes before `started`
 * (UPSTREAM_UNAVAILABLE: a kept copy may stand in); `stop` once it no longer waits.
 */
function leaving({ deadline, signal }: Parameters<Send>[1], waitMs: number) {
  const { promise, reject } = Promise.withResolvers<never>();
  const onAbort = () => reject(signal!.reason);
  const timer = setTimeout(() => reject(budgetSpent()), Math.max(0, deadline - Date.now()));
  // Its wait is over: it was let through, gave up, ran out of budget or its caller left.
  let over = false;
  const giveUp = () => {
    // No verdict on the requests that joined this call later (coalesce.ts): they ask again, waiting on their own.
    const error = trialOut();
    error.unwaitedMs = 0;
    reject(error);
  };
  const waiting = Number.isFinite(waitMs) ? setTimeout(giveUp, waitMs) : undefined;
  signal?.addEventListener('abort', onAbort, { once: true });
  // Settled by the race it is in, or never: its rejection must not be an unhandled one.
  promise.catch(() => undefined);
  return {
    promise,
    /** The call is let through: it no longer waits for a trial. False when its wait was over already (nobody reads it). */
    started: () => (clearTimeout(waiting), !over),
    stop: () => (
      (over = true),
      clearTimeout(timer),
      clearTimeout(waiting),
      signal?.removeEventListener('abort', onAbort)
    ),
  };
}

const TRIAL_OUT = new Error('the upstream circuit breaker is half-open and its trial call did not end in time');
/** A call's wait for a half-open breaker's trial is over, without its outcome: a kept copy may stand in. */
export const trialOut = () => pimError('UPSTREAM_UNAVAILABLE', TRIAL_OUT);

// Thrown through cockatiel for an outcome that proves nothing of the PIM; never leaves this step.
const UNPROVEN = new Error('neither an answer of the PIM nor a fault');

/**
 * Counts consecutive faults, and at `threshold` asks the upstream a call of its own (`ask`); the next fault
 * after that call failed too opens the breaker (the call's own failure is such a fault). A catalog the PIM is
 * slow or broken on fails every call for it, in a row when one request asks it many times over: those faults
 * are about those requests while the PIM answers the probe, and must not open the breaker for everyone.
 * A call answered while the probe is out ends the run of faults it was asked for: its verdict then counts for
 * nothing. Without `ask`, the faults alone open it.
 */
function confirmedBreaker(threshold: number, ask: (() => void) | undefined, isClosed: () => boolean) {
  let faults = 0;
  // A probe is out; `pending` while its verdict still counts.
  let asking = false;
  let pending = false;
  let down = false;
  let answeredAt = -Infinity;
  const breaker: IBreaker = {
    // Serialised by cockatiel's toJSON only, which nothing here calls.
    get state() {
      return { faults, asking, pending, down };
    },
    set state(_) {},
    success() {
      faults = 0;
      pending = false;
      down = false;
    },
    failure(circuit) {
      // Half-open: cockatiel reopens on its one trial call's failure, whatever this says.
      if (circuit !== CircuitState.Closed || down) return ((faults = 0), (down = false), true);
      // cockatiel passes the state a call started in: one that failed once the breaker had opened counts for nothing.
      if (!isClosed()) return false;
      if (++faults < threshold) return false;
      if (!ask) return ((faults = 0), true);
      // The PIM answered a probe within the last interval: these faults are about their requests too. One probe
      // an interval at most, however fast a catalog the PIM is broken on fails.
      if (performance.now() - answeredAt < PROBE_INTERVAL_MS) return ((faults = 0), false);
      if (!asking) {
        asking = pending = true;
        // Not from inside cockatiel's own bookkeeping of this failure.
        queueMicrotask(ask);
      }
      return false;
    },
  };
  return {
    breaker,
    /** The probe failed as an outage does: the next fault opens the breaker, unless a call was answered since. */
    down: () => void (down = pending),
    /** The PIM answered the probe. */
    answered: () => void (answeredAt = performance.now()),
    /** The probe is over: the next fault past the threshold may ask again (one that proved nothing must too). */
    settled: () => void (asking = false),
  };
}

/**
 * The circuit breaker step (cockatiel): after consecutive upstream faults it asks the upstream its probe
 * call; if that fails too, it fails calls at once, then lets one trial call through. Without a probe, the
 * faults alone open it. Retries (retry.ts) go inside it, so a retried call is one decision.
 */
export function createBreaker({
  breakerThreshold,
  halfOpenAfterMs,
  trialWaitMs,
  logger,
  probe,
  shutdown,
}: Pick<ResilienceOptions, 'breakerThreshold' | 'halfOpenAfterMs'> &
  Pick<ResilienceHooks, 'logger'> &
  Pick<RetryOptions, 'shutdown'> & {
    /** The longest a call arriving while the half-open trial is out waits for its outcome (PIM_TIMEOUT_MS). */
    trialWaitMs: number;
    /** Sends the upstream's probe call with `send` (everything below the breaker, through its decision). */
    probe?: ((send: Send) => Promise<unknown>) | undefined;
  }): {
  layer: Layer;
  status: UpstreamStatus;
  /** The error a call let through before the breaker opened gets instead of being sent now; else nothing. */
  stop(): Error | undefined;
  close(): void;
} {
  // The steps below the breaker, once composed: where the probe goes.
  let below: Send | undefined;
  // When the PIM last answered a call itself (status.answeredAt), on the monotonic clock.
  let answeredAt = -Infinity;
  const probing = new WeakSet<CallOptions>();
  // Sends the probe through the breaker's own decision over the steps below it, marked so its fault is known.
  const ask = (sendProbe: (send: Send) => Promise<unknown>) => () =>
    void Promise.resolve()
      .then(() => sendProbe((request, call) => (probing.add(call), decide(below!)(request, call))))
      .then(counter.answered, (error: unknown) => void (isProbeAnswer(error) && counter.answered()))
      .finally(() => counter.settled());
  const counter = confirmedBreaker(breakerThreshold, probe && ask(probe), () => breaker.state === CircuitState.Closed);
  const breaker = circuitBreaker(handleWhen(isFault), { halfOpenAfter: halfOpenAfterMs, breaker: counter.breaker });
  // A breaker cannot change more often than once per half-open delay, so neither does its log.
  const log = createUpstreamLog(logger, halfOpenAfterMs);
  breaker.onStateChange((state) => {
    if (state === CircuitState.Open) log.breaker('open');
    if (state === CircuitState.Closed) log.breaker('closed');
  });

  const breakerLayer: Layer = (next) => {
    below ??= next;
    return decide(next);
  };
  // The PIM itself answered a call (or the probe standing trial): what readiness reads when its probe finds no slot.
  const pimAnswered = () => {
    answeredAt = performance.now();
    log.answered();
  };
  // The half-open trial, when the call let through for it proved nothing: the probe, sent past the breaker. A fault
  // (or an answer that is no answer) reopens it; the PIM answering closes it.
  const probeTrial = (sendProbe: (send: Send) => Promise<unknown>) =>
    // Marked as the trial: a 429 is the PIM answering, not a Retry-After to hold every waiting call for.
    sendProbe((request, call) => (probing.add(call), below!(request, { ...call, trial: true }))).then(
      () => void pimAnswered(),
      (error: unknown) => {
        if (isProbeAnswer(error)) return void pimAnswered();
        throw isFault(error) ? error : pimError('UPSTREAM_UNAVAILABLE', UNPROVEN);
      },
    );
  const decide =
    (next: Send): Send =>
    (request, call) => {
      const state = breaker.state;
      if (state === CircuitState.Closed) return decideOnce(next, request, call);
      // Callers arriving while the trial is out wait in cockatiel for its outcome (and the probe's after it when the
      // trial proves nothing), at most `trialWaitMs`: one credential's trial held up (its Retry-After, its queue)
      // must not hold every other's calls. Each leaves at its own budget's end too, or when its client does.
      const left = leaving(call, state === CircuitState.HalfOpen ? trialWaitMs : Infinity);
      // Only a half-open breaker's trial may hand an outcome that proves nothing over before the verdict is in (cockatiel
      // turns an open breaker half-open as it lets the trial call through, so an open one may be half-open next).
      const handover = probe ? Promise.withResolvers<Answer>() : undefined;
      const decision = decideOnce(next, request, call, handover, left.started);
      return Promise.race([handover?.promise ?? decision, decision, left.promise]).finally(left.stop);
    };
  const decideOnce = async (
    next: Send,
    request: Parameters<Send>[0],
    call: Parameters<Send>[1],
    handover?: PromiseWithResolvers<Answer>,
    started = () => true,
  ): Promise<Answer> => {
    let answer: PimError | undefined;
    let unproven: { result: Answer } | { error: unknown } | undefined;
    // Neither answer nor fault proves anything of the PIM. cockatiel counts an error it does not handle as neither
    // a success nor a failure, but closes a half-open breaker on one: there it is a failure, the outcome kept.
    // Such an outcome (an answer the HTTP cache kept, a caller that left) goes to its caller at once, and the probe
    // stands trial in its place, so a PIM that is back is not refused again for another half-open delay (with a
    // shared cache, or a client cancelling each trial, again and again).
    const provesNothing = (outcome: NonNullable<typeof unproven>) => {
      unproven = outcome;
      if (breaker.state !== CircuitState.HalfOpen) throw UNPROVEN;
      if (!handover || !probe) throw pimError('UPSTREAM_UNAVAILABLE', UNPROVEN);
      if ('result' in outcome) handover.resolve(outcome.result);
      else handover.reject(outcome.error);
      return probeTrial(probe);
    };
    let result: Answer | undefined;
    let trial = false;
    try {
      result = await breaker.execute(async () => {
        // It gave up waiting for the trial: not sent for nobody to read (a trial now, it is the probe's turn).
        if (!started()) return provesNothing({ error: trialOut() });
        call.onLetThrough?.();
        trial = breaker.state !== CircuitState.Closed;
        try {
          const result = await next(request, trial ? { ...call, trial } : call);
          // The HTTP cache below answered, not the PIM.
          if (result.cached) return provesNothing({ result });
          pimAnswered();
          return result;
        } catch (error) {
          if (error === UNPROVEN || (error as Error).cause === UNPROVEN) throw error;
          log.failed(error);
          // The probe is judged as readiness judges it: a refused server key or a page that is not JSON is no
          // answer. Such an answer is no fault cockatiel counts; the next fault of a real call opens the breaker.
          const probe = probing.has(call);
          // A trial's fault may be about that call alone (a catalog the PIM is slow or broken on, one credential's
          // own): closed, such faults are confirmed by the probe before they open the breaker; half-open, the probe
          // stands trial in its place too, so one client asking its failing call first cannot keep it open for all.
          if (trial && !probe && isFault(error) && handover) return provesNothing({ error });
          if (isFault(error) || (probe && isFaultyAnswer(error))) {
            if (probe) counter.down();
            throw error;
          }
          // An answer (a 4xx) is the upstream speaking: it counts as a success, then goes on; one the HTTP cache
          // kept (a 404) is not the PIM speaking now.
          if (error instanceof PimError && isUpstreamAnswer(error)) {
            if (error.cached) return provesNothing({ error });
            answeredAt = performance.now();
            answer = error;
            return undefined;
          }
          // Neither answer nor fault: the caller left, the budget ran out.
          return provesNothing({ error });
        }
      });
    } catch (error) {
      if (error instanceof BrokenCircuitError) throw pimError('UPSTREAM_UNAVAILABLE', error);
      if (!unproven) throw error;
    }
    // Whatever the breaker made of an outcome that proves nothing, the caller gets that outcome.
    if (unproven) {
      if ('result' in unproven) return unproven.result;
      throw unproven.error;
    }
    if (answer) {
      // The trial was throttled: the PIM answered, which closed the breaker for every call waiting on the trial. Its
      // own caller waits out the Retry-After now, then asks once more, as the retry step would have.
      // A kept copy stands in at once instead (standIn), as for any 429; the re-ask is the retry step's next attempt
      // (counted, and within PIM_RETRIES), never a fresh sequence.
      const wait =
        trial && answer.status === 429 && !call.standIn && call.attemptsMade === undefined
          ? answer.unwaitedMs
          : undefined;
      if (wait === undefined || wait >= call.deadline - Date.now()) throw answer;
      await waitToRetry(wait, answer, call.signal, shutdown);
      // The retry step's next attempt, whichever the 429 came at; through decide(), so a breaker that went half-open
      // meanwhile is waited for at most `trialWaitMs`, as for any call arriving then.
      return decide(next)(request, { ...call, attemptsMade: answer.attemptsMade ?? 1 });
    }
    return result!;
  };

  const status: UpstreamStatus = {
    get breaker() {
      return breakerStates[breaker.state as keyof typeof breakerStates];
    },
    get answeredAt() {
      return answeredAt;
    },
  };
  // Half-open lets its trial call through, which may itself have queued: only an open breaker stops a call.
  const stop = () =>
    breaker.state === CircuitState.Open
      ? pimError(
          'UPSTREAM_UNAVAILABLE',
          new BrokenCircuitError('the upstream circuit breaker opened while the call waited'),
        )
      : undefined;
  return { layer: breakerLayer, status, stop, close: log.close };
}
