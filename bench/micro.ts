/**
 * The features of the bill of costs that live inside the upstream client and the context, where
 * no setting turns them off: their own CPU per request, timed in-process around a no-op call
 * (one upstream call per request, as in the scenarios).
 */
import type { Dispatcher } from 'undici';
import { createMetrics } from '../src/observability/metrics.ts';
import { createAdmission } from '../src/pim/admission/admission.ts';
import { createByteLimits } from '../src/pim/rest/byte-limits.ts';
import { createCredentialKey } from '../src/pim/credential.ts';
import { buildRequest } from '../src/pim/rest/endpoints.ts';
import { createFairQueue } from '../src/pim/admission/fair-queue.ts';
import { createBreaker } from '../src/pim/steps/breaker.ts';
import { createRetry } from '../src/pim/steps/retry.ts';
import { createTelemetry } from '../src/pim/steps/telemetry.ts';
import type { CallOptions, Send } from '../src/pim/rest/types.ts';
import { requestIdOf } from '../src/observability/plugins/request-log.ts';

const cpuUs = () => {
  const { user, system } = process.cpuUsage();
  return user + system;
};

/** CPU µs per iteration of `work`, the cheapest of three rounds of `n` iterations. */
async function perCall(n: number, work: (i: number) => unknown): Promise<number> {
  let best = Infinity;
  for (let round = 0; round < 3; round++) {
    const started = cpuUs();
    for (let i = 0; i < n; i++) await work(i);
    best = Math.min(best, (cpuUs() - started) / n);
  }
  return best;
}

// A dispatch that answers at once: start, then end, as undici's would for an empty response.
const instant: Dispatcher.Dispatch = (_opts, handler) => {
  const controller = { aborted: false, paused: false, reason: null } as unknown as Dispatcher.DispatchController;
  handler.onRequestStart?.(controller, {});
  handler.onResponseEnd?.(controller, {});
  return true;
};
// Resolves when the dispatch ends, as `request()` does around the interceptor chain.
const dispatched = (dispatch: Dispatcher.Dispatch, opts: Dispatcher.DispatchOptions) =>
  new Promise<void>((resolve, reject) => {
    dispatch(opts, { onResponseEnd: () => resolve(), onResponseError: (_c, error) => reject(error) });
  });

/** The admission (fair queue, per-call deadline timer, credential key) around an instant dispatch, net of it. */
async function admissionCost(n: number, call: CallOptions): Promise<number> {
  const queue = createFairQueue({ maxConcurrency: 16, maxPerKey: 16 });
  const keyOf = createCredentialKey(['x-api-key']);
  const admitted = createAdmission({ queue, keyOf, requestTimeoutMs: 10_000 })(instant);
  // Fresh headers per GraphQL request, as the context builds them, so the credential key is hashed each time.
  const opts = () => ({ path: '/', method: 'GET' as const, headers: { ...call.headers }, deadline: call.deadline });
  const bare = await perCall(n, () => dispatched(instant, opts()));
  return (await perCall(n, () => dispatched(admitted, opts()))) - bare;
}

/** µs of CPU each in-process feature adds to one request, net of the same loop without it. */
export async function measureInProcess(n = 100_000): Promise<Record<string, number>> {
  const request = buildRequest('searchProducts', { catalogId: 'C1' }, { maxPageSize: 200, maxIdLength: 128 });
  const answer = {
    body: { data: [] },
    size: 11,
    weight: 11,
    freshness: { maxAgeS: 0, sharedMaxAgeS: 0, shared: false },
  };
  const send: Send = async () => answer;
  const bytes = createByteLimits({
    maxRequestBytes: 2 ** 24,
    maxInflightBytes: 2 ** 28,
    maxInflightBytesPerCredential: 2 ** 28,
  });
  const call: CallOptions = {
    headers: { 'x-api-key': 'bench' },
    deadline: Date.now() + 3_600_000,
    bytes: bytes.open('bench'),
    partition: 'bench',
  };
  const breaker = createBreaker({ breakerThreshold: 10, halfOpenAfterMs: 10_000, trialWaitMs: 10_000 });
  const guarded = breaker.layer(createRetry({ retries: 2, retryBaseMs: 100 })(send));
  const empty = await perCall(n, () => send(request, call));
  const breakerAndRetries = (await perCall(n, () => guarded(request, call))) - empty;
  breaker.close();
  const metrics = createMetrics();
  const counted = createTelemetry({ calls: metrics.upstreamCalls, duration: metrics.upstreamDuration })(send);
  const upstreamMetrics = (await perCall(n, () => counted(request, call))) - empty;
  const admission = await admissionCost(n, call);
  // One byte account per GraphQL request: opened, charged once per call, released with the response.
  const byteCaps = await perCall(n, () => {
    const account = bytes.open('bench');
    account.charge(2_700, 200);
    account.release();
  });
  // A fresh request each time, as the id is remembered per request object; net of making it.
  const bare = await perCall(n, () => new Request('http://bench/graphql'));
  const requestId = (await perCall(n, () => requestIdOf(new Request('http://bench/graphql')))) - bare;
  return {
    'breaker and retries': breakerAndRetries,
    'metrics of each upstream call': upstreamMetrics,
    'deadline and admission (fair queue)': admission,
    'byte caps': byteCaps,
    'request id': requestId,
  };
}
