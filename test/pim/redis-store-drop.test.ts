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
