// @module-tag redis-server
import { setTimeout as sleep } from 'node:timers/promises';
import { expect, it } from 'vitest';
import { purge } from './reads.ts';
import { TOKEN, useHeldFleet } from './held-fleet.ts';

// A verdict (404) to a call sent before a purge ends the copies from before that purge, not one read after it. When
// Redis did not take its delete in time, the replica marked the key ended up to the moment the delete failed: the copy
// another replica read after the purge (meanwhile) counted as ended, and this replica's next outage deleted it from
// Redis (for the whole fleet) instead of serving it.
const { fleet, pim } = useHeldFleet({ replicas: 3, redisTimeoutMs: 300 });

it('a verdict whose delete Redis did not take does not end the copy another replica read after the purge', async () => {
  const [a, b, c] = fleet.replicas as [
    (typeof fleet.replicas)[0],
    (typeof fleet.replicas)[0],
    (typeof fleet.replicas)[0],
  ];
  const query = '{ p: catalogProducts(catalogId: "VERDICT1") }';
  const slow = a.post(query);
  await expect.poll(() => pim.held !== undefined).toBe(true);
  pim.mode = 'v2';
  expect(await purge(a.origin, TOKEN, { catalogId: 'VERDICT1' })).toBeLessThan(300);
  await sleep(50);
  // Writes wait (reads go on) for a second: the delete of A's verdict, then B's store.
  await fleet.redis.client.call('CLIENT', 'PAUSE', '1000', 'WRITE');
  pim
    .held!.writeHead(404, { 'content-type': 'application/json' })
    .end(JSON.stringify({ status: 404, meta: {}, error: 'not published yet' }));
  expect((await slow).body.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  await sleep(30);
  expect((await b.post(query)).body.data.p.data[0].version).toBe('v2');
  await sleep(1_500);
  expect(await fleet.redis.client.keys('*lkg*'), 'the copy B kept, in Redis').not.toHaveLength(0);
  pim.mode = 'down';
  const fromA = (await a.post(query)).body;
  expect(fromA.extensions?.stale, `replica A during the outage: ${JSON.stringify(fromA)}`).toHaveLength(1);
  const fromC = (await c.post(query)).body;
  expect(fromC.data?.p?.data?.[0]?.version, `replica C during the outage: ${JSON.stringify(fromC)}`).toBe('v2');
});
