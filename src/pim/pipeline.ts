import type { Dispatcher } from 'undici';
import type { Layer, Send } from './rest/types.ts';

type Interceptor = Dispatcher.DispatcherComposeInterceptor;

/** Every step of one upstream call; an absent one is switched off by configuration. */
export interface CallSteps {
  answerLookup: Layer | undefined;
  stale: Layer | undefined;
  coalescing: Layer | undefined;
  breaker: Layer;
  retry: Layer;
  upstreamFaults: Layer | undefined;
  telemetry: Layer | undefined;
  /** steps/send.ts: reads the answer off the dispatcher built from the steps below. */
  send: (dispatcher: Dispatcher) => Send;
  httpCache: Interceptor | undefined;
  admission: Interceptor;
  /** The pooled sockets. */
  agent: Dispatcher;
}

/** The upstream call, in the one order it runs: each step sees only the calls the step before lets through. */
export function composeCall(steps: CallSteps): Send {
  const layers = [
    // steps/answer-lookup.ts, parsed fresh answers: a hit skips all below, nothing shared, guarded, queued or timed.
    steps.answerLookup,
    // steps/stale.ts, stale serving: outside every failure below, so a kept copy stands in for any (breaker's too).
    steps.stale,
    // steps/coalesce.ts: identical calls in flight share one, and so one breaker decision and one retry sequence.
    steps.coalescing,
    // steps/breaker.ts: outside the retries, so a retried call counts once and an open breaker stops the retrying.
    steps.breaker,
    // steps/retry.ts: each attempt goes through everything below, measured and judged afresh.
    steps.retry,
    // steps/upstream-faults.ts: judges each attempt's answer once (server key refused, a 2xx that is not JSON).
    steps.upstreamFaults,
    // steps/telemetry.ts: each attempt that reaches the dispatcher, with the status the PIM gave, and its span.
    steps.telemetry,
  ];
  // Inside the send, undici interceptors run in this order too, outermost first.
  const interceptors = [
    // cache/cache.ts, the HTTP cache: a hit or a revalidation answers before admission, so hits never queue.
    steps.httpCache,
    // admission/admission.ts, the fair queue: only calls bound for the wire wait for a slot and get a deadline;
    // it asks the breaker again as a call leaves it (the breaker may have opened while the call waited).
    steps.admission,
  ];
  // The socket: the Agent's pool, innermost. compose() makes its last interceptor the outermost.
  const dispatcher = steps.agent.compose(...interceptors.filter((step) => step !== undefined).reverse());
  return layers
    .filter((step) => step !== undefined)
    .reduceRight<Send>((next, layer) => layer(next), steps.send(dispatcher));
}
