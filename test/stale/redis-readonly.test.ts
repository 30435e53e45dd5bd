// @module-tag redis-server
import { expect, it, onTestFinished } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { startRedis, untilConnected } from '../helpers/redis.ts';
import { echo, type UpstreamHandler } from '../helpers/upstream.ts';

const servers = closedAfterEach();

// Replica A read X1 and X2; the PIM then fails for them while it answers every other read. Replica B never saw X1 or
// X2: only Redis holds their last good answers. Redis is then demoted (a failover): every write answers READONLY at
// once, every read still answers. Refused writes are no sign of a Redis that is away: its reads must go on.
it('Redis refusing writes (READONLY): the last-known-good copies it holds are still served', async () => {
  const redis = await startRedis();
  onTestFinished(() => redis.stop());
  let broken = false;
  const handler: UpstreamHandler = (req, res) => {
    if (broken && /\/X\d\//.test(req.url!)) return void res.writeHead(500).end();
    echo(req, res);
  };
  const upstream = await servers.startUpstream(handler);
  const env = { REDIS_URL: redis.url, REDIS_TIMEOUT_MS: '2000', PIM_RETRIES: '0' };
  const a = await servers.startFacade(upstream.url, env);
  const b = await servers.startFacade(upstream.url, env);
  // Three connections each, ready: before, a copy's store fails fast and never reaches Redis.
  await untilConnected(redis, 6);
  const x = (n: number) => `{ x: catalogProducts(catalogId: "X${n}") }`;
  expect((await a.post(x(1))).body.errors).toBeUndefined();
  expect((await a.post(x(2))).body.errors).toBeUndefined();
  await expect.poll(async () => (await redis.client.keys('pim-graphql:lkg:*')).length).toBe(2);
  broken = true;
  expect((await b.post(x(1))).body.extensions.stale).toHaveLength(1);

  await redis.client.call('REPLICAOF', '127.0.0.1', '1');
  // B answers other reads well (the PIM is fine for them); keeping each answer is a write Redis refuses.
  const others = Array.from({ length: 8 }, (_, i) => `y${i}: catalogProducts(catalogId: "Y${i}")`).join(' ');
  expect((await b.post(`{ ${others} }`)).body.errors).toBeUndefined();
  expect((await b.get('/metrics')).text).toMatch(/redis_command_failures_total\{store="stale"\} [1-9]/);

  const after = await b.post(x(2));
  expect(after.body.errors).toBeUndefined();
  expect(after.body.extensions?.stale).toHaveLength(1);
}, 20_000);
