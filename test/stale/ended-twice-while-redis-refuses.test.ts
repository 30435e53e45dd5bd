// @module-tag redis-server
import { expect, it, onTestFinished } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { startRedis } from '../helpers/redis.ts';
import { faults } from '../helpers/upstream.ts';
import { answerFor } from '../stale/reads.ts';

const servers = closedAfterEach();

// f142f8e: a verdict (404) Redis could not take is remembered with its time, and a copy in Redis produced no later is
// not served. The time is set only if the key has none (`if (!ended.has(key))`): a copy kept after a first refused
// verdict, then ended by a second verdict while Redis refused again, is newer than the first mark and comes back at
// the next outage.
it('a second verdict refused by Redis ends the copy kept since the first', async () => {
  const redis = await startRedis();
  onTestFinished(() => redis.stop());
  const { upstream, facade } = await servers.start(answerFor('v1'), {
    REDIS_URL: redis.url,
    REDIS_TIMEOUT_MS: '2000',
    PIM_RETRIES: '0',
    PIM_BREAKER_THRESHOLD: '1000',
  });
  const caller = { 'x-api-key': 'key-of-b-456' };
  const ask = async () => (await facade.post('{ p: catalogProducts(catalogId: "GONE") }', {}, caller)).body;
  const stored = async () => {
    const keys = await redis.client.keys('pim-graphql:lkg:*');
    return keys.length === 1 ? await redis.client.get(keys[0]!) : null;
  };

  expect((await ask()).data.p.data[0].version).toBe('v1');
  await expect.poll(stored).toContain('"v1"');

  // First verdict while Redis refuses writes.
  await redis.client.call('REPLICAOF', '127.0.0.1', '1');
  upstream.respond(faults.status(404, '{"error":"gone"}'));
  expect((await ask()).errors[0].extensions.code).toBe('NOT_FOUND');
  const firstVerdict = Date.now();
  await redis.client.call('REPLICAOF', 'NO', 'ONE');

  // The catalog is back (a later millisecond): a newer copy, kept in Redis.
  await expect.poll(() => Date.now()).toBeGreaterThan(firstVerdict);
  upstream.respond(answerFor('v2'));
  expect((await ask()).data.p.data[0].version).toBe('v2');
  await expect.poll(stored).toContain('"v2"');

  // Deleted again, while Redis refuses again.
  await redis.client.call('REPLICAOF', '127.0.0.1', '1');
  upstream.respond(faults.status(404, '{"error":"gone"}'));
  expect((await ask()).errors[0].extensions.code).toBe('NOT_FOUND');
  await redis.client.call('REPLICAOF', 'NO', 'ONE');
  expect(await stored()).toContain('"v2"');

  // The next outage: the deleted catalog's data must not come back.
  upstream.respond(faults.status(500, '{"error":"down"}'));
  const during = await ask();
  expect(during.extensions?.stale).toBeUndefined();
  expect(during.data?.p ?? null).toBeNull();
  expect(during.errors[0].extensions.code).toBe('UPSTREAM_ERROR');
}, 20_000);
