// @module-tag redis-server
import { afterAll, beforeAll, expect, it } from 'vitest';
import { closeRedis, createRedis } from '../src/redis.ts';
import { startRedis } from './helpers/redis.ts';

// REDIS_URL's `/db` (docs/configuration.md) may name a database the server does not have (16 by default, 0-15): a
// mistyped number. ioredis reported its SELECT's refusal and went on connected to database 0, so the caches, APQ and
// last-known-good copies were read and written there, beside whoever else uses it, while the log said they failed.
let redis: Awaited<ReturnType<typeof startRedis>>;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

it('a REDIS_URL naming a database the server lacks writes nothing into database 0', async () => {
  const errors: string[] = [];
  const connection = createRedis(`${redis.url}/99`, (error) => errors.push(error.message), 1_000);
  try {
    await expect.poll(() => errors.join(' | '), { timeout: 5_000 }).toMatch(/DB index is out of range/);
    // Written as the stores write, at any moment after the refusal: each fails as with Redis away.
    for (let i = 0; i < 5; i++) {
      await connection.set(`probe-${i}`, 'written-through-db-99').catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(await redis.client.keys('*')).toEqual([]);
  } finally {
    await closeRedis(connection);
  }
});

it('a database the server has is used, database 0 left untouched', async () => {
  const connection = createRedis(`${redis.url}/1`, () => undefined, 1_000);
  try {
    await expect.poll(() => connection.status, { timeout: 5_000 }).toBe('ready');
    await connection.set('kept-in-1', 'x');
    expect(await redis.client.get('pim-graphql:kept-in-1')).toBeNull();
    expect(await connection.get('kept-in-1')).toBe('x');
  } finally {
    await closeRedis(connection);
  }
});
