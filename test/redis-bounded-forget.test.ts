// @module-tag redis-server
import { once } from 'node:events';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createBoundedKeys } from '../src/redis-bounded.ts';
import { closeRedis, createRedis } from '../src/redis.ts';
import { startRedis } from './helpers/redis.ts';

let redis: Awaited<ReturnType<typeof startRedis>>;
let connection: ReturnType<typeof createRedis>;
beforeAll(async () => {
  redis = await startRedis();
  connection = createRedis(redis.url, () => undefined, 1_000);
  if (connection.status !== 'ready') await once(connection, 'ready');
});
afterAll(async () => {
  await closeRedis(connection);
  await redis.stop();
});

const HOUR_MS = 3_600_000;

// The store script now counts afresh when Redis evicted a bookkeeping key (allkeys-lru), but the forget script does
// not look: with the sum evicted, forgetting an indexed entry (a last-known-good copy the PIM now answers 404 for)
// DECRBYs a missing key, a negative sum with no expiry, which the store's check takes for a good count. From then on
// the indexed entries hold more bytes than the bound, for as long as the index lives (each write keeps it alive).
it('keeps the indexed entries within the byte bound when the sum was evicted before a forget', async () => {
  const family = createBoundedKeys(connection, 'lkg');
  const bounds = { maxEntries: 100, maxBytes: 1_000 };
  const value = 'x'.repeat(300);
  await family.store('a', value, HOUR_MS, bounds);
  await family.store('b', value, HOUR_MS, bounds);
  // Redis evicts the sum, as it may any key.
  expect(await redis.client.del('pim-graphql:lkg-bytes')).toBe(1);
  await family.forget('a');
  for (const name of ['c', 'd', 'e', 'f']) await family.store(name, value, HOUR_MS, bounds);
  const sizes = Object.values(await redis.client.hgetall('pim-graphql:lkg-sizes')).map(Number);
  const indexed = sizes.reduce((sum, size) => sum + size, 0);
  expect(indexed).toBeLessThanOrEqual(bounds.maxBytes);
  expect(Number(await redis.client.get('pim-graphql:lkg-bytes'))).toBe(indexed);
});
