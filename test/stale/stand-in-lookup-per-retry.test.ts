// @module-tag redis-server
import { describe, expect, it, onTestFinished } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { startRedis, untilConnected } from '../helpers/redis.ts';

const servers = closedAfterEach();

describe('a throttled PIM (429) while the shared Redis is frozen', () => {
  it('waits on Redis once for a stand-in, not once per retry', async () => {
    const redis = await startRedis();
    onTestFinished(() => redis.stop());
    let calls = 0;
    const upstream = await servers.startUpstream((_req, res) => {
      calls++;
      res.writeHead(429, { 'content-type': 'text/plain' }).end('slow down');
    });
    const facade = await servers.startFacade(upstream.url, {
      REDIS_URL: redis.url,
      REDIS_TIMEOUT_MS: '1000',
      PIM_CACHE: 'false',
      PIM_RETRIES: '3',
      PIM_RETRY_BASE_MS: '1',
      PIM_BREAKER_THRESHOLD: '1000',
    });
    await untilConnected(redis, 2);
    redis.freeze();

    const started = Date.now();
    const answer = await facade.post('{ catalogProducts(catalogId: "never-seen") }');
    const ms = Date.now() - started;
    expect(answer.body.errors?.[0]?.extensions?.code).toBe('UPSTREAM_RATE_LIMITED');
    expect(calls).toBe(4);
    // REDIS_TIMEOUT_MS bounds a wait on Redis; before the PIM asked for time, one lookup (after the failure) was all.
    expect(ms, 'each retry waited REDIS_TIMEOUT_MS on the frozen Redis again').toBeLessThan(1_900);
  }, 30_000);
});
