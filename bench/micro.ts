/**
 * The features of the bill of costs that live inside the upstream client and the context, where
 * no setting turns them off: their own CPU per request, timed in-process around a no-op call
 * (one upstream call per request, as in the scenarios).
 */
import { startBudget, remainingBudgetMs } from '../src/pim/budget.ts';
import { createCallSignal } from '../src/pim/deadline.ts';
import { buildRequest } from '../src/pim/endpoints.ts';
import { createResilience } from '../src/pim/resilience.ts';
import type { Send } from '../src/pim/client.ts';
import { requestIdOf } from '../src/plugins/request-log.ts';

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

/** µs of CPU each in-process feature adds to one request, net of the same loop without it. */
export async function measureInProcess(n = 100_000): Promise<Record<string, number>> {
  const request = buildRequest('searchProducts', { catalogId: 'C1' }, { maxPageSize: 200, maxIdLength: 128 });
  const body = { data: [] };
  const send: Send = async () => body;
  const { layers } = createResilience({ retries: 2, retryBaseMs: 100, breakerThreshold: 10, halfOpenAfterMs: 10_000 });
  const guarded = layers.reduceRight((next, layer) => layer(next), send);
  const empty = await perCall(n, () => send(request, {}));
  const resilience = (await perCall(n, () => guarded(request, {}))) - empty;
  const deadline =
    (await perCall(n, () => {
      const headers = {};
      startBudget(headers, 20_000);
      createCallSignal(undefined, Math.min(10_000, remainingBudgetMs(headers))).release();
      return send(request, {});
    })) - empty;
  // A fresh request each time, as the id is remembered per request object; net of making it.
  const bare = await perCall(n, () => new Request('http://bench/graphql'));
  const requestId = (await perCall(n, () => requestIdOf(new Request('http://bench/graphql')))) - bare;
  return { 'breaker and retries': resilience, deadline, 'request id': requestId };
}
