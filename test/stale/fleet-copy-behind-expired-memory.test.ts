// @module-tag redis-server
import { describe, expect, it } from 'vitest';
import { untilConnected } from '../helpers/redis.ts';
import { useRedisFleet } from '../helpers/redis-fleet.ts';
import { faults, startUpstream } from '../helpers/upstream.ts';
import { withHeaders } from './reads.ts';

// "a field whose URL that credential read within the window gets the kept answer", kept "by this instance or, with
// REDIS_URL, by another in Redis". One replica still holds in memory an older copy of the URL, past its stale-if-error
// window (kept on for its freshness, or its stale-while-revalidate); the newer copy the other replica kept in Redis,
// well inside its window, is never looked for: the older one found in memory ends the search, and the call fails.
describe('a replica holding an older copy past its window, the fleet a newer one in Redis', () => {
  const fleet = useRedisFleet({
    upstream: () => startUpstream(withHeaders('v1', { 'cache-control': 'max-age=30' })),
    env: { PIM_RETRIES: '0', PIM_BREAKER_THRESHOLD: '1000', PIM_CACHE: 'false', PIM_STALE_IF_ERROR_MS: '1500' },
  });
  const A = { 'x-api-key': 'key-of-a-123' };
  const products = (id: string) => `{ p: catalogProducts(catalogId: "${id}") }`;

  it('is answered with the fleet’s copy, marked stale', async () => {
    const { upstream, replicas, redis } = fleet;
    const [older, newer] = [replicas[0]!, replicas[1]!];
    await untilConnected(redis, 4);
    expect((await older.post(products('U1'), {}, A)).body.errors).toBeUndefined();
    await new Promise((r) => setTimeout(r, 2_000));
    upstream.respond(withHeaders('v2', { 'cache-control': 'max-age=30' }));
    expect((await newer.post(products('U1'), {}, A)).body.data.p.data[0].version).toBe('v2');
    upstream.respond(faults.status(503, '{"status":503,"error":"down"}'));
    // The replica that read v2 serves it, stale: the copy is well inside its window.
    expect((await newer.post(products('U1'), {}, A)).body.extensions.stale).toHaveLength(1);
    // So must the other, from Redis.
    const { body } = await older.post(products('U1'), {}, A);
    expect(body.errors?.[0]?.extensions?.code).toBeUndefined();
    expect(body.data.p.data[0].version).toBe('v2');
    expect(body.extensions.stale).toHaveLength(1);
  });
});
