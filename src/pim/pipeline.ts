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
  /** Reads the answer off the dispatcher built from the steps below. */
  send: (dispatcher: Dispatcher) => Send;
  httpCache: Interceptor | undefined;
  admission: Interceptor;
  /** The pooled sockets. */
  agent: Dispatcher;
}

/** The upstream call, in the one order it runs: each step sees only the calls the step before lets through. */
export function composeCall(steps: CallSteps): Send {
  const layers = [
    // Parsed fresh answers: a hit skips everything below, so nothing is shared, guarded, queued or timed.
    steps.answerLookup,
    // Stale serving: outside every failure below, so a kept copy stands in whatever failed (breaker included).
    steps.stale,
    // Coalescing: identical calls in flight share one, and so one breaker decision and one retry sequence.
    steps.coalescing,
    // Breaker: outside the retries, so a retried call counts once and an open breaker stops the retrying.
    steps.breaker,
    // Retry: each attempt goes through everything below, measured and judged afresh.
    steps.retry,
    // Upstream faults: judges each attempt's answer once (server key refused, a 2xx that is not JSON).
    steps.upstreamFaults,
    // Telemetry: each attempt that reaches the dispatcher, with the status the PIM gave, and its span.
    steps.telemetry,
  ];
  // Inside the send, undici interceptors run in this order too, outermost first.
  const interceptors = [
    // HTTP cache: a hit or a revalidation answers before admission, so hits never queue.
    steps.httpCache,
    // Admission (fair queue): only calls that go to the wire wait for a connection slot and a deadline.
    steps.admission,
  ];
  // The socket: the Agent's pool, innermost. compose() makes its last interceptor the outermost.
  const dispatcher = steps.agent.compose(...interceptors.filter((step) => step !== undefined).reverse());
  return layers
    .filter((step) => step !== undefined)
    .reduceRight<Send>((next, layer) => layer(next), steps.send(dispatcher));
}
