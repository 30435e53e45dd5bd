// @module-tag redis-server
import { expect, it, onTestFinished } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { captureLogs } from '../helpers/logs.ts';
import { startRedis } from '../helpers/redis.ts';

const servers = closedAfterEach();
const TOKEN = 'admin-token-123456';

// docs/operations.md, Redis: "Each failure counts in redis_command_failures_total{store}; the warn line
// (... `Stale-answer store failed`) comes at most once per 10 s per store". The fleet's invalidation record lives on
// the stale store's connection, and its reads (the poll) are counted and logged so. Its write, the one
// POST /cache/invalidate sends, is not: Redis refusing it (READONLY after a failover demoted it) gives the caller a
// 503 while the metric an operator alerts on stays at 0 and no line says Redis failed.
it('a failed write of an invalidation to Redis is counted and logged like every other Redis failure', async () => {
  const redis = await startRedis();
  onTestFinished(() => redis.stop());
  const upstream = await servers.startUpstream();
  const { logger, lines } = captureLogs('info');
  const facade = await servers.startFacade(
    upstream.url,
    { REDIS_URL: redis.url, REDIS_TIMEOUT_MS: '2000', CACHE_ADMIN_TOKEN: TOKEN },
    { logger },
  );
  const invalidate = () =>
    fetch(`${facade.origin}/cache/invalidate`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ catalogId: 'C1' }),
    });
  // Once the façade's connection is up, an invalidation reaches Redis.
  await expect.poll(async () => (await invalidate()).status).toBe(200);

  // Demoted: every write refused with READONLY, reads still answered.
  await redis.client.call('REPLICAOF', '127.0.0.1', '1');
  expect((await invalidate()).status).toBe(503);

  const metrics = (await facade.get('/metrics')).text;
  expect(metrics).toMatch(/^redis_command_failures_total\{store="stale"\} [1-9]/m);
  expect(lines.filter((line) => line.msg.startsWith('Stale-answer store failed'))).toHaveLength(1);
}, 20_000);
