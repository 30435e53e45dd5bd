// @module-tag redis-server
import { expect, it, onTestFinished } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { captureLogs } from '../helpers/logs.ts';
import { startRedis, untilConnected } from '../helpers/redis.ts';
import { echo, type UpstreamHandler } from '../helpers/upstream.ts';

const servers = closedAfterEach();

// Replica A reads X1 and keeps its last good answer in Redis. The copy there is then unreadable (truncated, or
// written by another version in a shape this one cannot parse). The PIM fails (500) and replica B, which never saw
// X1, looks the copy up. An unusable copy is no copy: the client must get the outage's own code (UPSTREAM_ERROR),
// not a masked "Unexpected error." (INTERNAL_SERVER_ERROR) logged at error level with a stack, as if the façade had a bug.
it('a last-known-good copy in Redis that is not JSON is a miss, not an INTERNAL_SERVER_ERROR', async () => {
  const redis = await startRedis();
  onTestFinished(() => redis.stop());
  let broken = false;
  const handler: UpstreamHandler = (req, res) => {
    if (broken) return void res.writeHead(500).end();
    echo(req, res);
  };
  const upstream = await servers.startUpstream(handler);
  const env = { REDIS_URL: redis.url, REDIS_TIMEOUT_MS: '2000', PIM_RETRIES: '0' };
  const a = await servers.startFacade(upstream.url, env);
  const { logger, lines } = captureLogs('info');
  const b = await servers.startFacade(upstream.url, env, { logger });
  // Three connections each, ready: before, a copy's store fails fast and never reaches Redis.
  await untilConnected(redis, 6);
  const query = `{ x: catalogProducts(catalogId: "X1") }`;
  expect((await a.post(query)).body.errors).toBeUndefined();
  await expect.poll(async () => (await redis.client.keys('pim-graphql:lkg:*')).length).toBe(1);
  const [key] = await redis.client.keys('pim-graphql:lkg:*');
  const stored = (await redis.client.get(key!))!;
  // Its times intact, its answer cut short.
  await redis.client.set(key!, stored.slice(0, -5), 'KEEPTTL');

  broken = true;
  const answer = await b.post(query);
  expect(answer.body.errors?.[0]?.extensions?.code).toBe('UPSTREAM_ERROR');
  expect(lines.filter((line) => line.level >= 50)).toEqual([]);
}, 20_000);
