// @module-tag redis-server
import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { SLOW_REDIS_OK } from '../helpers/redis.ts';
import { faults } from '../helpers/upstream.ts';
import { facadeOnRedis } from './reads.ts';

const servers = closedAfterEach();
const products = (id: string) => `{ p: catalogProducts(catalogId: "${id}") }`;
const A = { 'x-api-key': 'key-of-a-123' };
const scriptCalls = (stats: string) =>
  [...stats.matchAll(/cmdstat_(?:eval|evalsha|fcall)[^:]*:calls=(\d+),/g)].reduce((sum, [, n]) => sum + Number(n), 0);

// The fleet's record of a 403, 404 or 410 is what ends the copies other instances hold; its mark of a URL's copies
// is that copy in Redis. A normal read writes its copy and nothing more: no mark of its own beside it.
it('a normal read of a new URL writes one script to Redis, its copy', async () => {
  const { redis, upstream, facade } = await facadeOnRedis(servers, {
    REDIS_TIMEOUT_MS: SLOW_REDIS_OK,
    PIM_CACHE: 'false',
  });
  // The credential's own mark, written with its first copy.
  expect((await facade.post(products('W0'), {}, A)).body.errors).toBeUndefined();
  await expect.poll(async () => (await redis.client.keys('*:keeper:*')).length).toBe(1);
  await redis.client.config('RESETSTAT');
  for (let i = 1; i <= 5; i++) expect((await facade.post(products(`W${i}`), {}, A)).body.errors).toBeUndefined();
  await expect.poll(async () => (await redis.client.keys('*:lkg:*')).length).toBe(6);
  expect(scriptCalls(await redis.client.info('commandstats'))).toBe(5);
});

// Before a copy stands in, the fleet's records are read. With Redis silent, the first URL's read waits for
// REDIS_TIMEOUT_MS and fails; the next URLs' copies stand in without waiting again (each URL's own read waited until
// the connection's breaker opened, after five failures in a row).
it('with Redis silent, one wait on it, then the other URLs’ copies stand in at once', async () => {
  const { redis, upstream, facade } = await facadeOnRedis(servers, {
    REDIS_TIMEOUT_MS: '1000',
    PIM_RETRIES: '0',
    PIM_BREAKER_THRESHOLD: '1000',
    PIM_CACHE: 'false',
  });
  const ids = ['S1', 'S2', 'S3', 'S4', 'S5'];
  for (const id of ids) expect((await facade.post(products(id), {}, A)).body.errors).toBeUndefined();
  redis.freeze();
  upstream.respond(faults.status(503));
  const took: number[] = [];
  for (const id of ids) {
    const started = performance.now();
    const { body } = await facade.post(products(id), {}, A);
    took.push(performance.now() - started);
    expect(body.extensions?.stale, JSON.stringify(body)).toHaveLength(1);
  }
  // The first waits one REDIS_TIMEOUT_MS; the others, well under one.
  expect(
    took.slice(1).every((ms) => ms < 500),
    took.map(Math.round).join(' '),
  ).toBe(true);
});
