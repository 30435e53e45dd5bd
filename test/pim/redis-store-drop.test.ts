// @module-tag redis-server
import { expect, it } from 'vitest';
import { read, useRedisStores, valueAt, write } from '../helpers/redis-store.ts';

const { server, replica } = useRedisStores(256 * 1_024);

// A read drops an answer it cannot use (unreadable: cut short, or written in another shape). A raw HDEL took the field
// only: its size stayed in the count of the bound until the entry's time ran out, and the bound held that much less.
it('drops an unreadable answer with its size, out of the count of the bound', async () => {
  const one = await replica();
  const redis = server.redis.client;
  await write(one, valueAt(Date.now()), '{"v":1}');
  const [hash] = await redis.keys('pim-graphql:http-cache:*');
  const [field] = await redis.hkeys(hash!);
  await redis.hset(hash!, field!, 'cut short');
  expect(await read(one)).toBeUndefined();
  await expect.poll(() => redis.get('pim-graphql:http-cache-bytes')).toBe('0');
  expect(await redis.hlen('pim-graphql:http-cache-sizes')).toBe(0);
});

// Cut short with its first line whole (its cachedAt readable, its body not): the forget's version 0 was taken as older
// than the field's own cachedAt, so the field stayed, and every read sent the script again in vain.
it('drops an answer cut short whose first line is whole, with its size', async () => {
  const one = await replica();
  const redis = server.redis.client;
  await redis.flushall();
  await write(one, valueAt(Date.now()), '{"v":1}');
  const [hash] = await redis.keys('pim-graphql:http-cache:*');
  const [field] = await redis.hkeys(hash!);
  const stored = (await redis.hgetBuffer(hash!, field!))!;
  await redis.hset(hash!, field!, stored.subarray(0, stored.length - 3));
  expect(await read(one)).toBeUndefined();
  await expect.poll(() => redis.hexists(hash!, field!)).toBe(0);
  expect(await redis.get('pim-graphql:http-cache-bytes')).toBe('0');
  expect(await redis.hlen('pim-graphql:http-cache-sizes')).toBe(0);
});
