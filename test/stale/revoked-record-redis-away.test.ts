// @module-tag redis-server
import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { faults } from '../helpers/upstream.ts';
import { facadeOnRedis } from './reads.ts';

const servers = closedAfterEach();
const products = (id: string) => `{ p: catalogProducts(catalogId: "${id}") }`;

// Before a copy stands in for a failed call, the fleet's record of 401s is read from Redis. Redis frozen, that read
// fails (within REDIS_TIMEOUT_MS, once a second per key at most): the copies held here still stand in, as they did
// before the record existed. A dependency failing takes no answer away, and a request waits on it at most twice: the
// HTTP cache's lookup, then the record's.
it('with Redis frozen, copies held here still stand in, each within two waits on Redis', async () => {
  const { redis, upstream, facade } = await facadeOnRedis(servers, {
    REDIS_TIMEOUT_MS: '500',
    PIM_RETRIES: '0',
    PIM_BREAKER_THRESHOLD: '1000',
  });
  const keys = ['key-of-a-123', 'key-of-b-456'].map((key) => ({ 'x-api-key': key }));
  for (const key of keys) await facade.post(products('U1'), {}, key);
  redis.freeze();
  upstream.respond(faults.status(503));
  for (let round = 0; round < 3; round++) {
    for (const key of keys) {
      const started = performance.now();
      const { body } = await facade.post(products('U1'), {}, key);
      expect(body.extensions?.stale, JSON.stringify(body)).toHaveLength(1);
      expect(body.data.p.data[0].version).toBe('v1');
      expect(performance.now() - started, 'waited on the silent Redis more than twice').toBeLessThan(2 * 500 + 400);
    }
  }
});
