// @module-tag redis-server
import { expect, it } from 'vitest';
import { key, read, slowWrite, useRedisStores, valueAt, write } from '../helpers/redis-store.ts';

const BOUND = 256 * 1_024;
const { server, replica, settled } = useRedisStores(BOUND);

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
    const slow = slowWrite(writer === 'this replica' ? one : other, valueAt(now), '{"v":');
    await write(one, valueAt(now + 1_000), JSON.stringify({ v: 2, pad: 'x'.repeat(BOUND / 2) }));
    await new Promise((resolve) => setTimeout(resolve, 100));
    await slow.end('1}');
    await expect.poll(async () => (await server.redis.client.keys('pim-graphql:http-cache:*')).length).toBe(1);
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
    await settled();
  }
  expect(await read(one)).toBe('{"v":1}');
}, 30_000);

// The mark lasted while the too-big answer would have been fresh: an older answer living longer was served after it.
it('serves no older answer that outlives the newer one too big to keep', async () => {
  const one = await replica();
  const at = { ...key, path: '/catalogs/C/products?outlives' };
  const now = Date.now();
  const slow = slowWrite(one, valueAt(now), '{"v":', at);
  await write(one, valueAt(now + 1_000, -700), JSON.stringify({ v: 2, pad: 'x'.repeat(BOUND / 2) }), at);
  await slow.end('1}');
  expect(await read(one, at)).toBeUndefined();
  await new Promise((resolve) => setTimeout(resolve, 500));
  expect(await read(one, at)).toBeUndefined();
});

// The forget of an answer too big to keep deleted the whole hash, a newer answer another replica had stored with it:
// an older answer whose body was still coming in then landed with nothing newer to keep, and the replica that had
// served the newer answer served the older one.
it('keeps a newer answer another replica stored when an older one is too big to keep', async () => {
  const [slowOne, newerOne, bigOne, later] = await Promise.all([replica(), replica(), replica(), replica()]);
  const at = { ...key, path: '/catalogs/C/products?newer-kept' };
  const now = Date.now();
  const slow = slowWrite(slowOne, valueAt(now - 2_000), '{"v":', at);
  await write(newerOne, valueAt(now), '{"v":2}', at);
  expect(await read(newerOne, at)).toBe('{"v":2}');
  await write(bigOne, valueAt(now - 1_000), JSON.stringify({ v: 1, pad: 'x'.repeat(BOUND / 2) }), at);
  // The delete in Redis is sent, not awaited.
  await settled();
  await slow.end('0}');
  for (const store of [newerOne, slowOne, bigOne, later]) expect(await read(store, at)).toBe('{"v":2}');
});
