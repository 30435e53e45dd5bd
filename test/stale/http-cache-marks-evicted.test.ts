// @module-tag redis-server
import { describe, expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { startRedis, untilConnected } from '../helpers/redis.ts';

const servers = closedAfterEach();

describe('HTTP cache in Redis: more keys Redis did not take than the marks hold', () => {
  it('still never serves an answer older than one the instance already served', async () => {
    const redis = await startRedis();
    let version = 0;
    let upstreamCalls = 0;
    const { facade } = await servers.start(
      (req, res) => {
        upstreamCalls++;
        version += req.url!.includes('target') ? 1 : 0;
        res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=3600' });
        res.end(JSON.stringify({ status: 200, meta: {}, data: [{ v: req.url!.includes('target') ? version : 0 }] }));
      },
      {
        REDIS_URL: redis.url,
        REDIS_TIMEOUT_MS: '150',
        PIM_RETRIES: '0',
        PIM_BREAKER_THRESHOLD: '1000',
        GRAPHQL_MAX_ALIASES: '2000',
        GRAPHQL_MAX_TOKENS: '100000',
        GRAPHQL_MAX_COST: '10000000',
        PIM_MAX_CALLS_PER_REQUEST: '2000',
        PIM_MAX_CONCURRENCY: '64',
        PIM_MAX_CONCURRENCY_PER_CREDENTIAL: '64',
        GRAPHQL_BUDGET_MS: '120000',
      },
    );
    try {
      await untilConnected(redis, 3);
      const first = await facade.post('{ catalogProducts(catalogId: "target") }');
      expect(JSON.stringify(first.body)).toContain('"v":1');
      await expect.poll(() => redis.client.keys('pim-graphql:http-cache:*')).toHaveLength(1);

      // Redis freezes: the target's lookup is a miss, version 2 goes out, its write is never taken.
      redis.freeze();
      for (let i = 0; i < 3; i++) await facade.post(`{ catalogProducts(catalogId: "warm-${i}") }`);
      const second = await facade.post('{ b: catalogProducts(catalogId: "target") }');
      expect(JSON.stringify(second.body)).toContain('"v":2');
      redis.thaw();
      await new Promise((r) => setTimeout(r, 1_500));

      // Redis is demoted (a failover): it answers lookups but refuses every write. Many other pages are read.
      await redis.client.call('REPLICAOF', '127.0.0.1', '1');
      const perRequest = 1_000;
      for (let batch = 0; batch < Number(process.env.BATCHES ?? 67); batch++) {
        const fields = Array.from(
          { length: perRequest },
          (_, i) => `f${i}: catalogProducts(catalogId: "other-${batch}-${i}")`,
        ).join(' ');
        const answer = await facade.post(`{ ${fields} }`);
        expect(answer.body.errors, JSON.stringify(answer.body.errors?.[0])).toBeUndefined();
      }
      expect(upstreamCalls).toBeGreaterThan(Number(process.env.BATCHES ?? 67) * 1_000);

      // Redis is promoted again; a repeat of the target (another document: no response-cache hit).
      await redis.client.call('REPLICAOF', 'NO', 'ONE');
      await new Promise((r) => setTimeout(r, 1_500));
      const third = await facade.post('{ c: catalogProducts(catalogId: "target") }');
      expect(JSON.stringify(third.body), 'served after the PIM had given version 2').not.toContain('"v":1');
    } finally {
      await redis.stop();
    }
  }, 300_000);
});
