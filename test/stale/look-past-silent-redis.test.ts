// @module-tag redis-server
import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { faults } from '../helpers/upstream.ts';
import { facadeOnRedis } from './reads.ts';

const servers = closedAfterEach();
const products = (id: string) => `{ p: catalogProducts(catalogId: "${id}") }`;
const A = { 'x-api-key': 'key-of-a-123' };
const revoked = faults.status(401, '{"status":401,"meta":{},"error":"API key revoked"}');

// docs/operations.md: Redis silent, "a request waits on the silent Redis at most twice, for the HTTP cache's lookup and
// for the records". A copy held here that a 401 heard here ended made the failed call look in Redis past it, after the
// records' read had already waited: a third wait.
it('with Redis silent, a copy a 401 ended here costs no third wait on Redis', async () => {
  const { redis, upstream, facade } = await facadeOnRedis(servers, {
    REDIS_TIMEOUT_MS: '1000',
    PIM_RETRIES: '0',
    PIM_BREAKER_THRESHOLD: '1000',
  });
  for (const id of ['R1', 'R2']) expect((await facade.post(products(id), {}, A)).body.errors).toBeUndefined();
  upstream.respond(revoked);
  expect((await facade.post(products('R1'), {}, A)).body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
  redis.freeze();
  upstream.respond(faults.status(503));
  const started = performance.now();
  const { body } = await facade.post(products('R2'), {}, A);
  const took = performance.now() - started;
  expect(body.extensions?.stale).toBeUndefined();
  expect(body.errors[0].extensions.code).toBe('UPSTREAM_ERROR');
  // Two waits of REDIS_TIMEOUT_MS at most (the HTTP cache's lookup, the records), not three.
  expect(took, String(Math.round(took))).toBeLessThan(2_600);
});
