// @module-tag redis-server
import { describe, expect, it, onTestFinished } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { startRedis, untilConnected } from '../helpers/redis.ts';

const servers = closedAfterEach();

describe('a PIM asking for time (503, Retry-After) while a kept copy sits in Redis', () => {
  it('is answered at once from the copy by an instance that never saw it, as by the one that did', async () => {
    const redis = await startRedis();
    onTestFinished(() => redis.stop());
    let down = false;
    const upstream = await servers.startUpstream((req, res) => {
      if (down) return void res.writeHead(503, { 'retry-after': '4', 'content-type': 'text/plain' }).end('busy');
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: 200, meta: {}, data: [{ url: req.url }] }));
    });
    const env = { REDIS_URL: redis.url, REDIS_TIMEOUT_MS: '2000', PIM_CACHE: 'false', PIM_BREAKER_THRESHOLD: '1000' };
    const saw = await servers.startFacade(upstream.url, env);
    const never = await servers.startFacade(upstream.url, env);
    await untilConnected(redis, 4);
    const query = '{ catalogProducts(catalogId: "c1") }';
    expect((await saw.post(query)).body.errors).toBeUndefined();
    await expect.poll(() => redis.client.keys('pim-graphql:lkg:*')).toHaveLength(1);

    down = true;
    const timed = async (facade: typeof saw) => {
      const started = Date.now();
      const answer = await facade.post(query);
      return { ms: Date.now() - started, stale: answer.body.extensions?.stale, errors: answer.body.errors };
    };
    const fromMemory = await timed(saw);
    expect(fromMemory.stale).toBeDefined();
    expect(fromMemory.ms).toBeLessThan(1_500);
    const fromRedis = await timed(never);
    expect(fromRedis.stale, JSON.stringify(fromRedis.errors)).toBeDefined();
    expect(fromRedis.ms, 'the instance that never saw the copy waited out the Retry-After').toBeLessThan(1_500);

    // Two requests at once on a third instance that never saw it: the second joins the first's call (coalescing).
    const third = await servers.startFacade(upstream.url, env);
    await untilConnected(redis, 6);
    const both = await Promise.all([timed(third), timed(third)]);
    for (const one of both) {
      expect(one.stale, JSON.stringify(one.errors)).toBeDefined();
      expect(one.ms, 'a request joining the call waited out the Retry-After').toBeLessThan(1_500);
    }
  }, 30_000);
});
