// @module-tag redis-server
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { createBoundedKeys } from '../src/redis-bounded.ts';
import { createRedis, closeRedis } from '../src/redis.ts';
import { startRedis } from './helpers/redis.ts';

let redis: Awaited<ReturnType<typeof startRedis>>;
let connection: ReturnType<typeof createRedis>;
beforeAll(async () => {
  redis = await startRedis();
  connection = createRedis(redis.url, () => undefined, 1_000);
});
afterAll(async () => {
  await closeRedis(connection);
  await redis.stop();
});
beforeEach(() => redis.client.flushall());

const HOUR_MS = 3_600_000;
const bounds = { maxEntries: 100, maxBytes: 1_000 };

it('keeps entries an older version indexed by the time stored, while their keys live', async () => {
  // As the earlier script left them: scored by the time stored (a minute ago), alive for another hour.
  const before = Date.now() - 60_000;
  for (const name of ['a', 'b']) {
    await redis.client.set(`pim-graphql:apq:${name}`, 'old', 'PX', HOUR_MS);
    await redis.client.zadd('pim-graphql:apq-index', before, name);
    await redis.client.hset('pim-graphql:apq-sizes', name, 3);
  }
  await redis.client.set('pim-graphql:apq-bytes', 6);
  await createBoundedKeys(connection, 'apq').store('c', 'new', HOUR_MS, bounds);
  expect((await redis.client.keys('pim-graphql:apq:*')).sort()).toEqual(
    ['a', 'b', 'c'].map((n) => `pim-graphql:apq:${n}`),
  );
  expect(await redis.client.get('pim-graphql:apq-bytes')).toBe('9');
});

it('stores nothing that alone passes the bound, and forgets a missing entry without leaving a sum behind', async () => {
  const family = createBoundedKeys(connection, 'lkg');
  await family.store('small', 'x'.repeat(100), HOUR_MS, bounds);
  await family.store('huge', 'x'.repeat(2_000), HOUR_MS, bounds);
  expect(await redis.client.keys('pim-graphql:lkg:*')).toEqual(['pim-graphql:lkg:small']);
  await redis.client.flushall();
  await family.forget('never-stored');
  expect(await redis.client.keys('*')).toEqual([]);
});

it('counts what an entry costs beyond its value, so names cannot fill Redis past the bound', async () => {
  const family = createBoundedKeys(connection, 'lkg');
  const overhead = (name: string) => 3 * name.length + 256;
  for (let i = 0; i < 50; i++) await family.store(`${'n'.repeat(100)}${i}`, '{}', HOUR_MS, { ...bounds, overhead });
  // Each counts 2 + 3 x 102 + 256 = 564 bytes: one fits in 1,000.
  expect(await redis.client.keys('pim-graphql:lkg:*')).toHaveLength(1);
  expect(Number(await redis.client.get('pim-graphql:lkg-bytes'))).toBeLessThanOrEqual(1_000);
});
