// @module-tag redis-server
import { expect, it } from 'vitest';
import type { CacheKey, CacheStore } from '../../src/pim/cache/cache-store.ts';
import { key, read, slowWrite, useRedisStores, valueAt, write } from '../helpers/redis-store.ts';

// A replica never serves an answer older than one it has served or seen, whatever order the writes land in Redis.
const BOUND = 256 * 1_024;
const { server, replica } = useRedisStores(BOUND);
let pages = 0;
const fresh = (headers: Record<string, string> = {}): CacheKey => ({
  ...key,
  path: `${key.path}?p=${pages++}`,
  headers,
});
const big = (v: number) => JSON.stringify({ v, pad: 'x'.repeat(BOUND / 2) });
const english = { 'accept-language': 'en' };

// The write replaced whatever the field held: an older answer whose body came in last replaced the newer one.
it.each(['this replica', 'another replica'])(
  'keeps the newer answer when an older one lands in Redis after it (the older written by %s)',
  async (writer) => {
    const [one, other] = await Promise.all([replica(), replica()]);
    const at = fresh();
    const now = Date.now();
    const slow = slowWrite(writer === 'this replica' ? one : other, valueAt(now), '{"v":', at);
    await write(one, valueAt(now + 1_000), '{"v":2}', at);
    expect(await read(one, at)).toBe('{"v":2}');
    await slow.end('1}');
    expect(await read(one, at)).toBe('{"v":2}');
    expect(await read(other, at)).toBe('{"v":2}');
  },
);

// The first variant in the hash that matched was served: an older answer stored with no Vary, beside a newer one that
// varies on accept-language, answered the requests both match.
it.each([
  ['the older varies on accept-language, the newer on nothing', english, undefined],
  ['the older varies on nothing, the newer on accept-language', undefined, english],
])('serves the newer of two variants that match (%s)', async (_, olderVary, newerVary) => {
  const one = await replica();
  const now = Date.now();
  for (let i = 0; i < 10; i++) {
    const at = fresh(english);
    await write(one, valueAt(now, 600_000, olderVary), '{"v":1}', at);
    await write(one, valueAt(now + 1_000, 600_000, newerVary), '{"v":2}', at);
    expect(await read(one, at)).toBe('{"v":2}');
  }
});

// A newer answer of another variant of `en`'s key is stored and served; `en`'s older copy must stay a miss.
const anotherVariantStored = async (one: CacheStore, en: CacheKey, now: number) => {
  const german = { 'accept-language': 'de' };
  const de = { ...en, headers: german };
  await write(one, valueAt(now + 2_000, 600_000, german), '{"v":"de"}', de);
  expect(await read(one, de)).toBe('{"v":"de"}');
  expect(await read(one, en)).toBeUndefined();
};

// A mark is about the whole key; a newer answer of another variant ended it, and the older copy of this one, landed
// after the too-big answer's delete, was served again.
it('keeps the mark of an answer too big to keep when a newer answer of another variant is stored', async () => {
  const one = await replica();
  const en = fresh(english);
  const now = Date.now();
  const slow = slowWrite(one, valueAt(now, 600_000, english), '{"v":', en);
  await write(one, valueAt(now + 1_000, 600_000, english), big(2), en);
  await slow.end('1}');
  expect(await read(one, en)).toBeUndefined();
  await anotherVariantStored(one, en, now);
});

// The same for the mark of an answer Redis did not take (here a byte count of another shape fails the write before
// the script changes anything; a Redis away during the write leaves the same state).
it('keeps the mark of an answer Redis did not take when a newer answer of another variant is stored', async () => {
  const one = await replica();
  const en = fresh(english);
  const now = Date.now();
  await write(one, valueAt(now, 600_000, english), '{"v":1}', en);
  expect(await read(one, en)).toBe('{"v":1}');
  const bytes = 'pim-graphql:http-cache-bytes';
  const count = await server.redis.client.get(bytes);
  await server.redis.client.del(bytes);
  await server.redis.client.rpush(bytes, 'not a count');
  await write(one, valueAt(now + 1_000, 600_000, english), '{"v":2}', en);
  await server.redis.client.del(bytes);
  if (count !== null) await server.redis.client.set(bytes, count);
  expect(await read(one, en)).toBeUndefined();
  await anotherVariantStored(one, en, now);
});

// An answer already expired when its body was in is not stored, yet it ended the mark all the same.
it('keeps the mark of an answer too big to keep when the next newer answer is not stored', async () => {
  const one = await replica();
  const at = fresh();
  const now = Date.now();
  const slow = slowWrite(one, valueAt(now), '{"v":', at);
  await write(one, valueAt(now + 1_000), big(2), at);
  await slow.end('1}');
  expect(await read(one, at)).toBeUndefined();
  await write(one, valueAt(now + 2_000, -5_000), '{"v":3}', at);
  expect(await read(one, at)).toBeUndefined();
});
