// @module-tag redis-server
import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { useRedisFleet } from '../helpers/redis-fleet.ts';
import { untilConnected } from '../helpers/redis.ts';
import { startUpstream } from '../helpers/upstream.ts';
import { purge } from './reads.ts';

const TOKEN = 'a-long-enough-admin-token';
const KEY = { 'x-api-key': 'key-of-a-123' };
let version = 'v1';

// Every answer is fresh for five minutes.
function answer(req: IncomingMessage, res: ServerResponse) {
  const body = JSON.stringify({ status: 200, meta: { languageId: null }, data: [{ url: req.url, version }] });
  res
    .writeHead(200, {
      'content-type': 'application/json',
      'cache-control': 'max-age=300',
      date: new Date().toUTCString(),
    })
    .end(body);
}

const products = (id: string) => `{ products: catalogProducts(catalogId: "${id}") }`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// Replica A takes a purge and answers 200; Redis loses the fleet's record (FLUSHALL, a restart with no persistence, an
// eviction) before replica B's next read of it, once a second. B never learnt of the purge: it served the catalog as it
// was before the publish, as fresh, for the answer's whole max-age.
describe('a purge whose record Redis loses before another replica read it', () => {
  const fleet = useRedisFleet({
    upstream: () => startUpstream(answer),
    env: { CACHE_ADMIN_TOKEN: TOKEN, RESPONSE_CACHE_MAX_BYTES: '1048576' },
  });

  it('is not lost on the replicas that had not read it yet', async () => {
    const { redis, replicas } = fleet;
    const [a, b] = [replicas[0]!, replicas[1]!];
    await untilConnected(redis, 4);
    // A purge made before: B has read the record once.
    expect(await purge(a.origin, TOKEN, { catalogId: 'OTHER' })).toBe(200);
    await sleep(1_200);
    version = 'v1';
    expect((await b.post(products('C1'), {}, KEY)).body.data.products.data[0].version).toBe('v1');
    expect((await b.post(products('C1'), {}, KEY)).body.data.products.data[0].version).toBe('v1');
    // The catalog is published; the PIM's hook tells A, and Redis loses its data right after.
    version = 'v2';
    expect(await purge(a.origin, TOKEN, { catalogId: 'C1' })).toBe(200);
    await redis.client.flushall();
    // Every replica has read the fleet's record by now.
    await sleep(1_500);
    const fromA = await a.post(products('C1'), {}, KEY);
    const fromB = await b.post(products('C1'), {}, KEY);
    expect(fromA.body.data.products.data[0].version).toBe('v2');
    expect({ replica: 'B', version: fromB.body.data.products.data[0].version }).toEqual({
      replica: 'B',
      version: 'v2',
    });
    expect(fromB.headers.get('cache-control')).not.toMatch(/max-age=2\d\d/);
  });
});
