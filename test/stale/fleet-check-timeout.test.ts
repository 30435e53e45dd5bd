// @module-tag redis-server
import { setTimeout as sleep } from 'node:timers/promises';
import { expect, it } from 'vitest';
import { purge } from './reads.ts';
import { answer, TOKEN, useHeldFleet } from './held-fleet.ts';

// A keep of an answer to a call sent before a purge waits on a GET that tells whether Redis holds a copy read after
// the purge (another replica's). That GET timing out (Redis slow past REDIS_TIMEOUT_MS for a moment) was taken as "no
// such copy": the older answer's write went out, and once Redis answered again it replaced the newer copy.
const { fleet, pim } = useHeldFleet({ replicas: 3, redisTimeoutMs: 200 });

it('a keep whose check of Redis timed out does not replace the copy another replica read after the purge', async () => {
  const [a, b, c] = fleet.replicas as [
    (typeof fleet.replicas)[0],
    (typeof fleet.replicas)[0],
    (typeof fleet.replicas)[0],
  ];
  const query = '{ p: catalogProducts(catalogId: "ORDER2") }';
  const slow = a.post(query);
  await expect.poll(() => pim.held !== undefined).toBe(true);
  pim.mode = 'v2';
  expect(await purge(a.origin, TOKEN, { catalogId: 'ORDER2' })).toBeLessThan(300);
  await sleep(50);
  expect((await b.post(query)).body.data.p.data[0].version).toBe('v2');
  await expect.poll(async () => (await fleet.redis.client.keys('*')).length).toBeGreaterThan(0);
  fleet.redis.freeze();
  try {
    answer(pim.held!, 'v1');
    expect((await slow).body.data.p.data[0].version).toBe('v1');
    await sleep(600);
  } finally {
    fleet.redis.thaw();
  }
  await sleep(500);
  pim.mode = 'down';
  const during = (await c.post(query)).body;
  expect(during.extensions?.stale, `no kept copy for replica C: ${JSON.stringify(during)}`).toHaveLength(1);
  expect(during.data.p.data[0].version, 'the copy Redis holds for the fleet').toBe('v2');
});
