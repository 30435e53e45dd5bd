import { afterAll, beforeAll, expect, it } from 'vitest';
import { startFacade, type Facade } from '../helpers/facade.ts';
import { startUpstream, type Upstream } from '../helpers/upstream.ts';

// A PIM that accepts every call and never answers. Its callers give up first (their budget, GRAPHQL_BUDGET_MS, is
// shorter than PIM_TIMEOUT_MS, as a client's own timeout can be): no call ever fails as the PIM's fault, so the breaker
// never opens, while every sent call keeps its slot for its whole PIM_TIMEOUT_MS (admission.ts).
let upstream: Upstream;
let facade: Facade;
beforeAll(async () => {
  upstream = await startUpstream(() => undefined);
  facade = await startFacade(upstream.url, {
    PIM_CACHE: 'false',
    PIM_MAX_CONCURRENCY: '1',
    PIM_TIMEOUT_MS: '4000',
    GRAPHQL_BUDGET_MS: '600',
    PIM_BREAKER_THRESHOLD: '1',
    PIM_RETRIES: '0',
    READINESS_MAX_AGE_MS: '100',
  });
});
afterAll(async () => {
  await facade?.close();
  await upstream?.close();
});

it('is not ready for a PIM that never answered anything, however its slots are held', async () => {
  let load = true;
  let n = 0;
  const loader = (async () => {
    while (load) {
      await facade.post(`{ catalogProducts(catalogId: "frozen-${n++}") }`).catch(() => undefined);
    }
  })();
  try {
    await expect.poll(() => upstream.requests.length).toBeGreaterThanOrEqual(1);
    const statuses: number[] = [];
    const until = Date.now() + 9_000;
    while (Date.now() < until) {
      statuses.push((await facade.get('/readiness')).status);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(
      statuses.filter((status) => status === 200).length,
      `readiness said 200 ${statuses.filter((s) => s === 200).length} times of ${statuses.length} for a PIM that never answered (${upstream.requests.length} calls sent)`,
    ).toBe(0);
  } finally {
    load = false;
    await loader;
  }
}, 30_000);
