// @module-tag redis-server
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { CacheKey, CacheStore, CacheValue } from '../../src/pim/cache/cache-store.ts';
import { createRedisCacheStore } from '../../src/pim/cache/redis-cache-store.ts';
import { closeRedis, createRedis } from '../../src/redis.ts';
import { startRedis } from '../helpers/redis.ts';

const BOUND = 256 * 1_024;
let redis: Awaited<ReturnType<typeof startRedis>>;
const connections: ReturnType<typeof createRedis>[] = [];
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await Promise.all(connections.map(closeRedis));
  await redis.stop();
});

// One replica's store, as cache.ts makes it: no body over a quarter of the bound is kept.
const replica = async (maxEntryBytes = BOUND / 4) => {
  const connection = createRedis(redis.url, () => undefined, 2_000);
  connections.push(connection);
  // Commands fail fast until the connection is up.
  if (connection.status !== 'ready') await new Promise((resolve) => connection.once('ready', resolve));
  return createRedisCacheStore({
    redis: connection,
    maxEntryBytes,
    maxBytes: BOUND,
    replyTimeoutMs: 2_000,
    onError: () => undefined,
  });
};
const key: CacheKey = { method: 'GET', origin: 'http://pim.test', path: '/catalogs/C/products', headers: {} };
const valueAt = (cachedAt: number, lifetime = 600_000) =>
  ({
    statusCode: 200,
    statusMessage: 'OK',
    headers: { 'content-type': 'application/json' },
    cacheControlDirectives: {},
    cachedAt,
    staleAt: cachedAt + lifetime,
    deleteAt: cachedAt + lifetime,
  }) as CacheValue;
const write = (store: CacheStore, value: CacheValue, body: string, at = key) =>
  new Promise<void>((resolve) => {
    const stream = store.createWriteStream(at, value)!;
    stream.on('close', resolve).on('finish', resolve).end(Buffer.from(body));
  });
const read = async (store: CacheStore, at = key) => {
  const found = await store.get(at);
  return found && Buffer.concat([found.body as Buffer].flat()).toString();
};

// A newer answer too big to keep went no further than the replica that had it: the older one stayed in Redis, and
// every other replica served it while fresh.
it('ends the older answer in Redis for every replica when a newer one is too big to keep', async () => {
  const [one, other] = await Promise.all([replica(), replica()]);
  const now = Date.now();
  await write(one, valueAt(now), '{"v":1}');
  expect(await read(other)).toBe('{"v":1}');
  await write(one, valueAt(now + 1_000), JSON.stringify({ v: 2, pad: 'x'.repeat(BOUND / 2) }));
  expect(await read(one)).toBeUndefined();
  await expect.poll(() => read(other)).toBeUndefined();
});

// The delete took the newer answer's variant only: an older answer stored under other Vary names (none, here) stayed,
// and the other replicas served it while fresh.
it('ends an older answer of other Vary names as well', async () => {
  const [one, other] = await Promise.all([replica(), replica()]);
  const now = Date.now();
  await write(one, valueAt(now), '{"v":1}');
  const english = { ...key, headers: { 'accept-language': 'en' } };
  expect(await read(other, english)).toBe('{"v":1}');
  const newer = { ...valueAt(now + 1_000), vary: { 'accept-language': 'en' } };
  await write(one, newer, JSON.stringify({ v: 2, pad: 'x'.repeat(BOUND / 2) }), english);
  expect(await read(one, english)).toBeUndefined();
  await expect.poll(() => read(other, english)).toBeUndefined();
});

// The forget's reply ended this replica's mark of the newer answer: an older answer written after the forget (its body
// still coming in, here or on another replica) was served again.
it.each(['this replica', 'another replica'])(
  'serves no older answer that lands in Redis after a newer one too big to keep: written by %s',
  async (writer) => {
    const [one, other] = await Promise.all([replica(), replica()]);
    const now = Date.now() + 10_000;
    const slow = (writer === 'this replica' ? one : other).createWriteStream(key, valueAt(now))!;
    const slowDone = new Promise((resolve) => slow.on('close', resolve).on('finish', resolve));
    slow.write('{"v":');
    await write(one, valueAt(now + 1_000), JSON.stringify({ v: 2, pad: 'x'.repeat(BOUND / 2) }));
    await new Promise((resolve) => setTimeout(resolve, 100));
    slow.end('1}');
    await slowDone;
    await expect.poll(async () => (await redis.client.keys('pim-graphql:http-cache:*')).length).toBe(1);
    expect(await read(one)).toBeUndefined();
  },
);

// Those marks were kept in the list of answers Redis did not take, whose evictions raise a floor for every key: past
// 65,536 pages too big to keep, each fresh copy in Redis was a miss on that replica.
it('still serves what Redis holds after many pages too big to keep', async () => {
  const [one, other] = await Promise.all([replica(64), replica(64)]);
  const now = Date.now();
  await write(other, valueAt(now), '{"v":1}');
  const big = JSON.stringify({ v: 2, pad: 'x'.repeat(100) });
  for (let batch = 0; batch < 66; batch++) {
    await Promise.all(
      Array.from({ length: 1_000 }, (_, i) =>
        write(one, valueAt(now + 1_000), big, { ...key, path: `/catalogs/C/products?page=${batch * 1_000 + i}` }),
      ),
    );
    // Each page's delete in Redis is sent, not awaited: the batch waits for them here.
    await Promise.all(connections.map((connection) => connection.ping()));
  }
  expect(await read(one)).toBe('{"v":1}');
}, 30_000);

// The mark lasted while the too-big answer would have been fresh: an older answer living longer was served after it.
it('serves no older answer that outlives the newer one too big to keep', async () => {
  const one = await replica();
  const at = { ...key, path: '/catalogs/C/products?outlives' };
  const now = Date.now();
  const slow = one.createWriteStream(at, valueAt(now))!;
  const slowDone = new Promise((resolve) => slow.on('close', resolve).on('finish', resolve));
  slow.write('{"v":');
  await write(one, valueAt(now + 1_000, -700), JSON.stringify({ v: 2, pad: 'x'.repeat(BOUND / 2) }), at);
  slow.end('1}');
  await slowDone;
  expect(await read(one, at)).toBeUndefined();
  await new Promise((resolve) => setTimeout(resolve, 500));
  expect(await read(one, at)).toBeUndefined();
});
