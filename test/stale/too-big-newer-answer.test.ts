// @module-tag redis-server
import { expect, it, onTestFinished } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { startRedis, untilConnected } from '../helpers/redis.ts';
import { faults } from '../helpers/upstream.ts';
import { page } from './refusing-redis.ts';

const servers = closedAfterEach();

const query = '{ p: catalogProducts(catalogId: "GROWN") }';

// src/pim/steps/stale.ts keeps "the last 2xx answer of every URL per credential", and ends an older copy that may not
// stand in for a newer answer ("A newer answer that may not be served stale ... ends the older copy (in Redis too)").
// A newer answer too big for a store's bound (PIM_STALE_MAX_BYTES in memory, PIM_STALE_REDIS_MAX_BYTES in Redis) is
// not kept there — but the older copy it replaced stays, and at the next outage the client that was shown v2 is
// shown v1 again (last-known-good.ts `remember`; redis-bounded.ts refuses the value before it drops the old one).
it('in memory: a newer answer too big to keep ends the older copy rather than leaving it to stand in', async () => {
  const { upstream, facade } = await servers.start(page('v1'), {
    PIM_STALE_MAX_BYTES: '1048576',
    PIM_CACHE: 'false',
    PIM_RETRIES: '0',
    PIM_BREAKER_THRESHOLD: '1000',
  });
  expect((await facade.post(query)).body.data.p.data[0].version).toBe('v1');
  // 600 KB of text weighs 1.2 MB in memory (two bytes a character): past the 1 MiB bound.
  upstream.respond(page('v2', 600_000));
  expect((await facade.post(query)).body.data.p.data[0].version).toBe('v2');

  upstream.respond(faults.status(500, '{"error":"down"}'));
  const during = (await facade.post(query)).body;
  expect(during.data?.p?.data?.[0]?.version).not.toBe('v1');
});

it('in Redis: a newer answer too big for the fleet bound ends the older copy there', async () => {
  const redis = await startRedis();
  onTestFinished(() => redis.stop());
  const upstream = await servers.startUpstream(page('v1'));
  const env = {
    REDIS_URL: redis.url,
    REDIS_TIMEOUT_MS: '2000',
    PIM_STALE_REDIS_MAX_BYTES: '65536',
    PIM_CACHE: 'false',
    PIM_RETRIES: '0',
    PIM_BREAKER_THRESHOLD: '1000',
  };
  const a = await servers.startFacade(upstream.url, env);
  const b = await servers.startFacade(upstream.url, env);
  // Two façades, two connections each with the HTTP cache off (withRefusingRedis counts them).
  await untilConnected(redis, 4);
  expect((await a.post(query)).body.data.p.data[0].version).toBe('v1');
  await expect.poll(async () => (await redis.client.keys('pim-graphql:lkg:*')).length).toBe(1);
  // 100 KB: past the 64 KiB the fleet keeps in Redis.
  upstream.respond(page('v2', 100_000));
  expect((await a.post(query)).body.data.p.data[0].version).toBe('v2');
  // A's write of v2 has been handled once a later write after it has (one connection, in order).
  upstream.respond(page('other'));
  expect((await a.post('{ o: catalogProducts(catalogId: "OTHER") }')).body.errors).toBeUndefined();
  const stored = async () => {
    const keys = await redis.client.keys('pim-graphql:lkg:*');
    return Promise.all(keys.map((key) => redis.client.get(key)));
  };
  await expect.poll(async () => (await stored()).some((value) => value?.includes('"version":"other"'))).toBe(true);

  // The outage, on the replica that never read it: only Redis could answer, and it must not answer v1.
  upstream.respond(faults.status(500, '{"error":"down"}'));
  const during = (await b.post(query)).body;
  expect(during.data?.p?.data?.[0]?.version).not.toBe('v1');
});
