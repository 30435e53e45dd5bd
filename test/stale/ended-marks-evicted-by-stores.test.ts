// @module-tag redis-server
import { expect, it, onTestFinished } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { startRedis } from '../helpers/redis.ts';
import { faults } from '../helpers/upstream.ts';
import { answerFor, operations } from '../stale/reads.ts';

const servers = closedAfterEach();

// f142f8e: a verdict (404) Redis could not take is remembered in the `ended` LRU, so the deleted copy Redis still holds
// never comes back. 8099dea puts a mark in the same LRU for every store Redis refuses: while Redis refuses writes
// (demoted by a failover), every ordinary answer kept adds one, and a few hundred reads push the verdict's mark out.
// The deleted catalog's data then comes back at the next outage.
it('ordinary answers kept while Redis refuses do not push out the mark of a verdict it refused', async () => {
  const redis = await startRedis();
  onTestFinished(() => redis.stop());
  const { upstream, facade } = await servers.start(answerFor('v1'), {
    REDIS_URL: redis.url,
    REDIS_TIMEOUT_MS: '2000',
    PIM_STALE_MAX_BYTES: '1048576',
    PIM_CACHE: 'false',
    PIM_RETRIES: '0',
    PIM_BREAKER_THRESHOLD: '1000',
  });
  const caller = { 'x-api-key': 'key-of-b-456' };
  const ask = async () => (await facade.post('{ p: catalogProducts(catalogId: "GONE") }', {}, caller)).body;
  const storedGone = async () => {
    for (const key of await redis.client.keys('pim-graphql:lkg:*')) {
      const value = await redis.client.get(key);
      if (value?.includes('GONE')) return value;
    }
    return null;
  };
  expect((await ask()).data.p.data[0].version).toBe('v1');
  await expect.poll(storedGone).toContain('"v1"');

  await redis.client.call('REPLICAOF', '127.0.0.1', '1');
  const gone = faults.status(404, '{"error":"gone"}');
  const live = answerFor('v1');
  upstream.respond((req, res) => (req.url!.includes('GONE') ? gone(req, res) : live(req, res)));
  expect((await ask()).errors[0].extensions.code).toBe('NOT_FOUND');
  // Ordinary traffic while Redis still refuses writes.
  for (const operation of operations(0, 600)) {
    const { body } = await facade.post(operation, {}, caller);
    expect(body.errors).toBeUndefined();
  }
  await redis.client.call('REPLICAOF', 'NO', 'ONE');
  expect(await storedGone()).toContain('"v1"');

  upstream.respond(faults.status(500, '{"error":"down"}'));
  const during = await ask();
  expect(during.extensions?.stale).toBeUndefined();
  expect(during.data?.p ?? null).toBeNull();
  expect(during.errors[0].extensions.code).toBe('UPSTREAM_ERROR');
}, 60_000);
