// @module-tag redis-server
import { describe, expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { startRedis, untilConnected } from '../helpers/redis.ts';

const servers = closedAfterEach();

describe('HTTP cache in Redis after Redis was frozen', () => {
  it('never serves an answer older than one the instance already served from the PIM', async () => {
    const redis = await startRedis();
    let version = 0;
    const { facade } = await servers.start(
      (req, res) => {
        version += req.url!.includes('target') ? 1 : 0;
        res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=60' });
        res.end(JSON.stringify({ status: 200, meta: {}, data: [{ url: req.url, version }] }));
      },
      { REDIS_URL: redis.url, REDIS_TIMEOUT_MS: '150', PIM_RETRIES: '0' },
    );
    try {
      await untilConnected(redis, 3);
      const first = await facade.post('{ catalogProducts(catalogId: "target") }');
      expect(JSON.stringify(first.body)).toContain('"version":1');
      await expect.poll(() => redis.client.keys('pim-graphql:http-cache:*')).toHaveLength(1);

      // Redis freezes: lookups time out (misses), and after five failures the store leaves Redis alone a second.
      redis.freeze();
      for (let i = 0; i < 3; i++) await facade.post(`{ catalogProducts(catalogId: "other-${i}") }`);
      // The target is read again from the PIM (its lookup a miss, its write never sent): version 2 goes out.
      const second = await facade.post('{ b: catalogProducts(catalogId: "target") }');
      expect(JSON.stringify(second.body)).toContain('"version":2');

      // Redis runs again; once the store tries it again, a repeat (another document: no response-cache hit) must not
      // go back to version 1.
      redis.thaw();
      await new Promise((r) => setTimeout(r, 1_500));
      await facade.post('{ catalogProducts(catalogId: "wake") }');
      const third = await facade.post('{ c: catalogProducts(catalogId: "target") }');
      expect(JSON.stringify(third.body), 'served after the PIM had given version 2').not.toContain('"version":1');
    } finally {
      await redis.stop();
    }
  }, 30_000);
});
