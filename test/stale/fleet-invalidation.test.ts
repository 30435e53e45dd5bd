// @module-tag redis-server
import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { useRedisFleet } from '../helpers/redis-fleet.ts';
import { startUpstream } from '../helpers/upstream.ts';
import { purge } from './reads.ts';

const TOKEN = 'a-long-enough-admin-token';
const KEY = { 'x-api-key': 'key-of-a-123' };
let version = 'v1';
const held: Array<() => void> = [];

// Every answer is fresh for five minutes; catalogs named HOLD* wait until released (the PIM read them already).
// Replica B's call is out when the invalidation reaches replica A; B's answer arrives before B has read the fleet's
// invalidations (once a second) and goes to the shared Redis cache dated after the invalidation (its Date), so once
// every replica knew of it the entry still counted as stored after it: both served the old data for its max-age.
function answer(req: IncomingMessage, res: ServerResponse) {
  const body = JSON.stringify({ status: 200, meta: { languageId: null }, data: [{ url: req.url, version }] });
  const send = () =>
    res
      .writeHead(200, {
        'content-type': 'application/json',
        'cache-control': 'max-age=300',
        date: new Date().toUTCString(),
      })
      .end(body);
  if (/catalogs\/HOLD/.test(req.url ?? '') && version === 'v1') held.push(send);
  else send();
}

const products = (id: string) => `{ products: catalogProducts(catalogId: "${id}") }`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('an invalidation across a fleet', () => {
  const fleet = useRedisFleet({
    upstream: () => startUpstream(answer),
    env: { CACHE_ADMIN_TOKEN: TOKEN, RESPONSE_CACHE_MAX_BYTES: '1048576' },
  });

  it('an answer B read before an invalidation sent to A is not kept fresh for the fleet after it', async () => {
    const { upstream, replicas } = fleet;
    const [a, b] = [replicas[0]!, replicas[1]!];
    const ids = ['HOLD1', 'HOLD2'];
    const versions: string[] = [];
    for (const id of ids) {
      version = 'v1';
      const pending = b.post(products(id), {}, KEY);
      for (let i = 0; i < 200 && held.length === 0; i++) await sleep(5);
      expect(held).toHaveLength(1);
      // The catalog changes and is published: the PIM's publish hook tells A, late in a second.
      while (Date.now() % 1_000 < 950) await sleep(5);
      version = 'v2';
      expect(await purge(a.origin, TOKEN, { catalogId: id })).toBe(200);
      // The answer the PIM read before the change leaves it just after the next second starts (its Date says so).
      while (Date.now() % 1_000 > 500) await sleep(2);
      held.shift()!();
      expect((await pending).body.data.products.data[0].version).toBe('v1');
      // Every replica has read the fleet's invalidations by now (each reads them every second).
      await sleep(1_500);
      const fromA = await a.post(products(id), {}, KEY);
      const fromB = await b.post(products(id), {}, KEY);
      versions.push(fromA.body.data.products.data[0].version, fromB.body.data.products.data[0].version);
    }
    expect(versions).toEqual(['v2', 'v2', 'v2', 'v2']);
    expect(upstream.requests.length).toBeGreaterThan(0);
  });
});
