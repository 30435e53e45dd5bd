// @module-tag redis-server
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { createBoundedHashes, createBoundedKeys } from '../src/redis-bounded.ts';
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

it('bounds a family of hashes field by field, and forgets a hash with every field counted out', async () => {
  const family = createBoundedHashes(connection, 'http-cache');
  const hash = (name: string) => redis.client.hgetall(`pim-graphql:http-cache:${name}`);
  // Ten fields of 300 bytes in two hashes, the later ones longer-lived: the first ones go.
  for (let i = 0; i < 10; i++) await family.store(`h${i % 2}`, `f${i}`, 'x'.repeat(300), HOUR_MS + i, bounds);
  expect(Object.keys({ ...(await hash('h0')), ...(await hash('h1')) }).sort()).toEqual(['f7', 'f8', 'f9']);
  expect(Number(await redis.client.get('pim-graphql:http-cache-bytes'))).toBe(900);
  // A field too big goes, and its older value with it; the hash's other fields stay.
  await family.store('h1', 'f9', 'x'.repeat(2_000), HOUR_MS, bounds);
  expect(Object.keys(await hash('h1'))).toEqual(['f7']);
  expect(await redis.client.pttl('pim-graphql:http-cache:h1')).toBeGreaterThan(HOUR_MS - 60_000);
  await family.forget('h1');
  expect(await hash('h1')).toEqual({});
  expect(await redis.client.zrange('pim-graphql:http-cache-index', '0', '-1')).toEqual(['h0 f8']);
  expect(await redis.client.get('pim-graphql:http-cache-bytes')).toBe('300');
});

it('forgets a hash for a version with only the fields no later than it counted out', async () => {
  const family = createBoundedHashes(connection, 'http-cache');
  const at = (cachedAt: number) => `${JSON.stringify({ cachedAt })}\n${'x'.repeat(100)}`;
  await family.store('h', 'older', at(1_000), HOUR_MS, bounds);
  await family.store('h', 'same', at(2_000), HOUR_MS, bounds);
  await family.store('h', 'later', at(3_000), HOUR_MS, bounds);
  await family.store('h', 'unreadable', 'x'.repeat(100), HOUR_MS, bounds);
  await family.store('other', 'older', at(1_000), HOUR_MS, bounds);
  await family.forget('h', undefined, 2_000);
  expect(Object.keys(await redis.client.hgetall('pim-graphql:http-cache:h'))).toEqual(['later']);
  expect((await redis.client.zrange('pim-graphql:http-cache-index', '0', '-1')).sort()).toEqual([
    'h later',
    'other older',
  ]);
  const sizes = await redis.client.hgetall('pim-graphql:http-cache-sizes');
  expect(Object.keys(sizes).sort()).toEqual(['h later', 'other older']);
  const sum = Object.values(sizes).reduce((total, size) => total + Number(size), 0);
  expect(Number(await redis.client.get('pim-graphql:http-cache-bytes'))).toBe(sum);
  // Without a version, the whole hash goes as before.
  await family.forget('h');
  expect(await redis.client.exists('pim-graphql:http-cache:h')).toBe(0);
  expect(await redis.client.zrange('pim-graphql:http-cache-index', '0', '-1')).toEqual(['other older']);
});

it('forgets one field for a version: the same cachedAt goes, a later one stays, 0 is a version', async () => {
  const family = createBoundedHashes(connection, 'http-cache');
  await redis.client.flushall();
  const at = (cachedAt: number) => `${JSON.stringify({ cachedAt })}\n${'x'.repeat(100)}`;
  await family.store('v', 'same', at(2_000), HOUR_MS, bounds);
  await family.store('v', 'later', at(3_000), HOUR_MS, bounds);
  await family.store('v', 'unreadable', 'x'.repeat(100), HOUR_MS, bounds);
  await family.forget('v', 'same', 2_000);
  await family.forget('v', 'later', 2_000);
  await family.forget('v', 'unreadable', 0);
  // 0 is a version too: a field holding a later one stays.
  await family.store('v', 'zero', at(1), HOUR_MS, bounds);
  await family.forget('v', 'zero', 0);
  expect(Object.keys(await redis.client.hgetall('pim-graphql:http-cache:v')).sort()).toEqual(['later', 'zero']);
  expect((await redis.client.zrange('pim-graphql:http-cache-index', '0', '-1')).sort()).toEqual(['v later', 'v zero']);
  const sizes = await redis.client.hgetall('pim-graphql:http-cache-sizes');
  expect(Object.keys(sizes).sort()).toEqual(['v later', 'v zero']);
  const sum = Object.values(sizes).reduce((total, size) => total + Number(size), 0);
  expect(Number(await redis.client.get('pim-graphql:http-cache-bytes'))).toBe(sum);
});
