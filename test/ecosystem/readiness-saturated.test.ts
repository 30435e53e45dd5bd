import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, expect, it } from 'vitest';
import { startFacade, type Facade } from '../helpers/facade.ts';
import { echo, startUpstream, type Upstream } from '../helpers/upstream.ts';

let upstream: Upstream | undefined;
let facade: Facade | undefined;
afterEach(async () => {
  await upstream?.close();
  await facade?.close();
  upstream = facade = undefined;
});

it('stays ready while two credentials hold every upstream slot of a slow but healthy PIM', async () => {
  // Callers' calls take 3 s; the readiness probe's call is answered at once.
  upstream = await startUpstream((req, res) => {
    if (req.url!.includes('/readiness-probe/')) return echo(req, res);
    const timer = setTimeout(() => echo(req, res), 3_000);
    res.once('close', () => clearTimeout(timer));
  });
  facade = await startFacade(upstream.url, {
    READINESS_MAX_AGE_MS: '100',
    PIM_CACHE: 'false',
    PIM_MAX_CONCURRENCY: '4',
  });
  expect((await facade.get('/readiness')).status).toBe(200);
  const load = ['key-a', 'key-b'].flatMap((key) =>
    Array.from({ length: 6 }, (_, i) =>
      facade!.post(`{ catalogProducts(catalogId: "${key}-${i}") }`, undefined, { 'x-api-key': key }),
    ),
  );
  await expect.poll(() => upstream!.requests.length).toBeGreaterThanOrEqual(4);
  await sleep(300);
  const statuses: number[] = [];
  for (let i = 0; i < 4; i++) {
    statuses.push((await facade.get('/readiness')).status);
    await sleep(500);
  }
  await Promise.all(load);
  expect(statuses).toEqual([200, 200, 200, 200]);
}, 30_000);

it('still turns unready when the PIM freezes while callers hold every upstream slot', async () => {
  // Nothing is ever answered, the probe neither: callers' calls time out, and the breaker opens.
  upstream = await startUpstream(() => undefined);
  facade = await startFacade(upstream.url, {
    READINESS_MAX_AGE_MS: '100',
    PIM_CACHE: 'false',
    PIM_MAX_CONCURRENCY: '4',
    // The PIM never answers, so never accepts the keys: they wait in one share, which here may hold every slot.
    PIM_MAX_CONCURRENCY_PER_CREDENTIAL: '4',
    PIM_TIMEOUT_MS: '1000',
    GRAPHQL_BUDGET_MS: '60000',
  });
  const load = ['key-a', 'key-b'].flatMap((key) =>
    Array.from({ length: 6 }, (_, i) =>
      facade!.post(`{ catalogProducts(catalogId: "${key}-${i}") }`, undefined, { 'x-api-key': key }).catch(() => null),
    ),
  );
  await expect.poll(() => upstream!.requests.length).toBeGreaterThanOrEqual(4);
  await expect.poll(async () => (await facade!.get('/readiness')).status, { interval: 200, timeout: 15_000 }).toBe(503);
  await upstream.close();
  upstream = undefined;
  await Promise.all(load);
}, 30_000);
