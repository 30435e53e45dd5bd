// @module-tag redis-server
import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import type { Facade } from '../helpers/facade.ts';
import { useRedisFleet } from '../helpers/redis-fleet.ts';
import { faults, startUpstream } from '../helpers/upstream.ts';
import { MAX_INVALIDATED_TAGS } from '../../src/pim/cache/invalidations.ts';
import { answerFor } from './reads.ts';

const TOKEN = 'a-long-enough-admin-token';
const A = { 'x-api-key': 'key-of-a-123' };
const B = { 'x-api-key': 'key-of-b-456' };

// Catalogs named T* are cacheable for five minutes; the others carry no caching headers at all.
const answer =
  (version: string) =>
  (req: IncomingMessage, res: ServerResponse): void => {
    if (/catalogs\/T/.test(req.url ?? '')) res.setHeader('cache-control', 'max-age=300');
    answerFor(version)(req, res);
  };

const products = (id: string) => `{ products: catalogProducts(catalogId: "${id}") }`;

/** Polls `read` (bounded, no fixed sleep) until `done` holds for its result, and returns that result. */
async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  for (let i = 0; i < 100; i++) {
    const value = await read();
    if (done(value)) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('condition not reached within 5 s');
}

describe('REDIS_URL: two instances share last-known-good answers and invalidations', () => {
  const fleet = useRedisFleet({
    upstream: () => startUpstream(answer('v1')),
    env: { CACHE_ADMIN_TOKEN: TOKEN, PIM_RETRIES: '0', PIM_BREAKER_THRESHOLD: '1000' },
  });

  const invalidate = (facade: Facade, body: unknown) =>
    facade.request('/cache/invalidate', {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  it('B serves the last-known-good answer of a read only A saw, to the same credential only', async () => {
    const { redis, upstream, replicas } = fleet;
    const [first, second] = [replicas[0]!, replicas[1]!];
    expect((await first.post(products('SEEN'), {}, A)).body.data.products.data[0].version).toBe('v1');
    // The copy reaches Redis after the answer has gone out: wait for it rather than race it.
    await until(
      () => redis.client.keys('pim-graphql:lkg:*'),
      (keys) => keys.length > 0,
    );
    upstream.respond(faults.status(500));
    const fromB = await second.post(products('SEEN'), {}, A);
    expect(fromB.body.data.products.data[0]).toMatchObject({ key: 'A', version: 'v1' });
    expect(fromB.body.extensions.stale).toEqual([
      { path: ['products'], age: expect.any(Number), reason: 'UPSTREAM_ERROR' },
    ]);
    const otherCredential = await second.post(products('SEEN'), {}, B);
    expect(otherCredential.body.errors[0].extensions.code).toBe('UPSTREAM_ERROR');
    expect((await redis.client.keys('*')).join(' ')).not.toMatch(/key-of/);
  });

  it('an invalidation sent to A ends the freshness on B; the invalidated answer stays last-known-good', async () => {
    const { redis, upstream, replicas } = fleet;
    const [first, second] = [replicas[0]!, replicas[1]!];
    upstream.respond(answer('v1'));
    expect((await first.post(products('T1'), {}, A)).body.data.products.data[0].version).toBe('v1');
    // B answers from the shared HTTP cache: fresh, and the PIM is not asked.
    const cached = await until(
      () => second.post(products('T1'), {}, A),
      () => upstream.requests.length === 1,
    );
    expect(cached.body.data.products.data[0].version).toBe('v1');

    upstream.respond(answer('v2'));
    const response = await invalidate(first, { catalogId: 'T1' });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ invalidated: 'catalog:T1' });
    // B reads the fleet's invalidations every second; it then asks the PIM again.
    const fresh = await until(
      () => second.post(products('T1'), {}, A),
      ({ body }) => body.data.products.data[0].version === 'v2',
    );
    expect(fresh.body.extensions?.stale).toBeUndefined();

    expect((await first.post(products('T2'), {}, B)).body.data.products.data[0].version).toBe('v2');
    expect((await invalidate(first, { all: true })).status).toBe(200);
    upstream.respond(faults.status(500));
    const kept = await until(
      () => second.post(products('T2'), {}, B),
      ({ body }) => body.extensions?.stale !== undefined,
    );
    expect(kept.body.data.products.data[0]).toMatchObject({ key: 'B', version: 'v2' });
    expect(kept.body.extensions.stale[0].reason).toBe('UPSTREAM_ERROR');
  });

  // Every replica reads the whole record each second: grown by every id a publish hook ever sent, it took longer
  // than REDIS_TIMEOUT_MS to read, and invalidations stopped reaching the other replicas.
  it('keeps the record of invalidations bounded, folding it into one of everything', async () => {
    const { redis, upstream, replicas } = fleet;
    const [first, second] = [replicas[0]!, replicas[1]!];
    upstream.respond(answer('v1'));
    // Stored in Redis by the first (its write goes on after its answer), then read fresh by the second: under load a
    // read before the write was a call of the second's own, and the count of calls never came back to one.
    await until(
      async () => (await first.post(products('T9'), {}, A), redis.client.keys('pim-graphql:http-cache:*')),
      (keys) => keys.length > 0,
    );
    expect((await second.post(products('T9'), {}, A)).body.data.products.data[0].version).toBe('v1');
    for (let i = 0; i <= MAX_INVALIDATED_TAGS; i++) {
      expect((await invalidate(first, { catalogId: `GONE-${i}` })).status).toBe(200);
    }
    expect(await redis.client.hlen('pim-graphql:invalidated')).toBeLessThanOrEqual(MAX_INVALIDATED_TAGS);
    // Folded, the record ends the freshness of everything stored before it, T9 too, on the other replica.
    upstream.respond(answer('v2'));
    await until(
      () => second.post(products('T9'), {}, A),
      ({ body }) => body.data.products.data[0].version === 'v2',
    );
  });
});
