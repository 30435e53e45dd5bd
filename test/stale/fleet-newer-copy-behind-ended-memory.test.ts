// @module-tag redis-server
import { describe, expect, it } from 'vitest';
import { untilConnected } from '../helpers/redis.ts';
import { useRedisFleet } from '../helpers/redis-fleet.ts';
import { faults, startUpstream } from '../helpers/upstream.ts';
import { withHeaders } from './reads.ts';

// A copy this replica holds, ended by a verdict the fleet heard since (a 404 of the group, a 401 of the key), is no
// last good answer; a copy another replica read after that verdict (the group restored), kept in Redis, is. The one in
// memory ended the search, and the call failed while the fleet held an answer inside its window.
describe('a replica holding a copy a fleet verdict ended, the fleet a newer one in Redis', () => {
  const fleet = useRedisFleet({
    upstream: () => startUpstream(withHeaders('v1', { age: '60' })),
    env: { PIM_RETRIES: '0', PIM_BREAKER_THRESHOLD: '1000', PIM_CACHE: 'false' },
  });
  const products = (id: string) => `{ p: catalogProducts(catalogId: "${id}") }`;

  // Each with a key of its own: the fleet's record of a key's 401s is read once a second.
  it.each([
    ['a 404 of that URL and key', 'key-of-a-123', (copy: string) => copy.replace(':lkg:', ':ended:')],
    ['a 401 of that key', 'key-of-b-456', (copy: string) => copy.replace(/:lkg:(\S+) .*/, ':revoked:$1')],
  ])('after %s, is answered with the newer copy, marked stale', async (_verdict, key, recordOf) => {
    const { upstream, replicas, redis } = fleet;
    const [older, newer] = [replicas[0]!, replicas[1]!];
    const id = `E-${key}`;
    const headers = { 'x-api-key': key };
    await untilConnected(redis, 4);
    upstream.respond(withHeaders('v1', { age: '60' }));
    // Produced a minute ago (its Age): this replica's copy is that old.
    expect((await older.post(products(id), {}, headers)).body.errors).toBeUndefined();
    const [copy] = await redis.client.keys(`*:lkg:*${id}*`);
    // The fleet's record of the verdict, heard by some replica 30 s ago; the group (or the key) came back since.
    await redis.client.set(recordOf(copy!), String(Date.now() - 30_000));
    upstream.respond(withHeaders('v2', {}));
    expect((await newer.post(products(id), {}, headers)).body.data.p.data[0].version).toBe('v2');
    upstream.respond(faults.status(503, '{"status":503,"error":"down"}'));
    const { body } = await older.post(products(id), {}, headers);
    expect(body.errors, JSON.stringify(body)).toBeUndefined();
    expect(body.data.p.data[0].version).toBe('v2');
    expect(body.extensions.stale).toHaveLength(1);
  });
});
