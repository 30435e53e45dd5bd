// @module-tag redis-server
import { expect, it } from 'vitest';
import { purge } from './reads.ts';
import { answer, TOKEN, useHeldFleet } from './held-fleet.ts';

// 5ff1831: a keep of an answer to a call sent before a purge (`unlessAfter`) goes to Redis only after a GET, while the
// keep of a later call (sent after the purge) goes at once. Redis slow for a moment (here: frozen, well within
// REDIS_TIMEOUT_MS): the later keep is queued behind the GET, and the older answer's write after it. Redis ends up
// holding v1 over the v2 the fleet already showed; the next outage serves v1 from every replica without a copy.
const { fleet, pim } = useHeldFleet({ replicas: 2, redisTimeoutMs: 10000 });

it('a later keep is not overtaken in Redis by the delayed keep of a call sent before a purge', async () => {
  const [a, c] = fleet.replicas as [(typeof fleet.replicas)[0], (typeof fleet.replicas)[0]];
  const query = '{ p: catalogProducts(catalogId: "ORDER1") }';
  const slow = a.post(query);
  await expect.poll(() => pim.held !== undefined).toBe(true);
  pim.mode = 'v2';
  expect(await purge(a.origin, TOKEN, { catalogId: 'ORDER1' })).toBeLessThan(300);
  await new Promise((r) => setTimeout(r, 100));
  fleet.redis.freeze();
  try {
    answer(pim.held!, 'v1');
    expect((await slow).body.data.p.data[0].version).toBe('v1');
    const fresh = (await a.post(query)).body;
    expect(fresh.data.p.data[0].version, JSON.stringify(fresh)).toBe('v2');
  } finally {
    fleet.redis.thaw();
  }
  await new Promise((r) => setTimeout(r, 500));
  pim.mode = 'down';
  const during = (await c.post(query)).body;
  expect(during.extensions?.stale, `no kept copy for replica C: ${JSON.stringify(during)}`).toHaveLength(1);
  expect(during.data.p.data[0].version, 'the copy Redis holds for the fleet').toBe('v2');
});
