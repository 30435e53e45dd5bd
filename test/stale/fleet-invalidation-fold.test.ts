// @module-tag redis-server
import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { Facade } from '../helpers/facade.ts';
import { useRedisFleet } from '../helpers/redis-fleet.ts';
import { startUpstream } from '../helpers/upstream.ts';

const TOKEN = 'a-long-enough-admin-token';
const HASH = 'pim-graphql:invalidated';

function answer(req: IncomingMessage, res: ServerResponse) {
  res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=300' });
  res.end(JSON.stringify({ status: 200, meta: { languageId: null }, data: [{ url: req.url }] }));
}
const read = (facade: Facade, id: string) => facade.post(`{ p: catalogProducts(catalogId: "${id}") }`);
const callsTo = (requests: Array<{ url: string }>, id: string) =>
  requests.filter((r) => r.url.includes(`/catalogs/${id}/`)).length;

describe('an instance whose own invalidation folds the fleet record', () => {
  const fleet = useRedisFleet({
    upstream: () => startUpstream(answer),
    replicas: 1,
    env: { CACHE_ADMIN_TOKEN: TOKEN, RESPONSE_CACHE_MAX_BYTES: '1048576' },
  });

  // 7ce18d6: "an instance's own invalidation read back is no news". When that invalidation is the one that folds the
  // record into `all` (docs: "every cache goes cold once"), the instance reads `all` back as news, counts it from
  // its next poll, and goes cold a second time: what it re-read just after its own invalidation is dropped again.
  it('goes cold once, not again at its next poll', async () => {
    const { redis, upstream, replicas } = fleet;
    const a = replicas[0]!;
    const old = String(Date.now() - 60_000);
    const fields: string[] = [];
    for (let i = 0; i < 1_000; i++) fields.push(`catalog:F${i}`, old);
    await redis.client.hset(HASH, ...fields);
    await sleep(1_500); // read by the replica's poll
    expect((await read(a, 'X')).body.errors).toBeUndefined();
    const invalidated = await a.request('/cache/invalidate', {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ catalogId: 'NEW' }),
    });
    expect(invalidated.status).toBe(200);
    expect(await redis.client.hkeys(HASH)).toEqual(['all']); // folded
    // Cold once: X is read again after the invalidation.
    expect((await read(a, 'X')).body.errors).toBeUndefined();
    expect(callsTo(upstream.requests, 'X')).toBe(2);
    await sleep(1_500); // the next poll reads the folded record
    expect((await read(a, 'X')).body.errors).toBeUndefined();
    // The answer read after the invalidation is fresh for 300 s: no third call.
    expect(callsTo(upstream.requests, 'X')).toBe(2);
  }, 20_000);
});
