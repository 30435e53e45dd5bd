// @module-tag redis-server
import { expect, it } from 'vitest';
import { untilConnected } from '../helpers/redis.ts';
import { useRedisFleet } from '../helpers/redis-fleet.ts';
import { startUpstream } from '../helpers/upstream.ts';
import { purge } from './reads.ts';

// A deleted catalog's 404, heard by replica A on a call sent before a purge that came while it was out (the deletion's
// own purge, say), is recorded nowhere ("no word on the copies read after it"), yet it deletes Redis's copy: the only
// mark the fleet's records have. The copy replica B read before that call, older than the 404 and than the purge, is
// still held in B's memory; and every later 404 of that URL, heard by a replica holding no copy, records nothing either
// (no mark left). At the next outage B serves the deleted catalog's data, stale.
const TOKEN = 'a-long-enough-admin-token';
let mode: 'v1' | 'v2' | 'gone-slow' | 'gone' | 'down' = 'v1';
const GONE = '{"status":404,"meta":{},"error":"No Catalog found"}';
const fleet = useRedisFleet({
  upstream: () =>
    startUpstream((_req, res) => {
      const json = { 'content-type': 'application/json' };
      if (mode === 'down') return void res.writeHead(503, json).end('{"status":503,"error":"down"}');
      if (mode === 'gone') return void res.writeHead(404, json).end(GONE);
      if (mode === 'gone-slow') return void setTimeout(() => res.writeHead(404, json).end(GONE), 800);
      res.writeHead(200, json).end(JSON.stringify({ status: 200, meta: {}, data: [{ version: mode }] }));
    }),
  env: { PIM_RETRIES: '0', PIM_BREAKER_THRESHOLD: '1000', PIM_CACHE: 'false', CACHE_ADMIN_TOKEN: TOKEN },
});
const A = { 'x-api-key': 'key-of-a-123' };

it.each([
  ['the 404 of a call sent before the purge', 'LATE1', false],
  ['that 404, then a plain one heard after the purge', 'LATE2', true],
])('after %s, the copy another replica read before both ends', async (_n, id, plainAfter) => {
  const { replicas, redis } = fleet;
  const [heard, other] = [replicas[0]!, replicas[1]!];
  const query = `{ p: catalogProducts(catalogId: "${id}") }`;
  await untilConnected(redis, 4);
  mode = 'v1';
  expect((await other.post(query, {}, A)).body.data.p.data[0].version).toBe('v1');
  await new Promise((r) => setTimeout(r, 50));
  mode = 'gone-slow';
  const slow = heard.post(query, {}, A);
  await new Promise((r) => setTimeout(r, 200));
  expect(await purge(heard.origin, TOKEN, { catalogId: id })).toBeLessThan(300);
  expect((await slow).body.errors[0].extensions.code).toBe('NOT_FOUND');
  if (plainAfter) {
    mode = 'gone';
    expect((await heard.post(query, {}, A)).body.errors[0].extensions.code).toBe('NOT_FOUND');
  }
  await new Promise((r) => setTimeout(r, 300));
  mode = 'down';
  const there = (await other.post(query, {}, A)).body;
  expect(there.extensions?.stale, `the deleted catalog's data served: ${JSON.stringify(there)}`).toBeUndefined();
  expect(there.errors[0].extensions.code).toBe('UPSTREAM_ERROR');
});

// What the late 404 records ends nothing read after the purge: the catalog back (v2), read by the other replica right
// after the purge, that copy stands in there.
it('a copy another replica read after the purge still stands in', async () => {
  const { replicas, redis } = fleet;
  const [heard, other] = [replicas[0]!, replicas[1]!];
  const query = `{ p: catalogProducts(catalogId: "LATE3") }`;
  await untilConnected(redis, 4);
  mode = 'v1';
  expect((await other.post(query, {}, A)).body.data.p.data[0].version).toBe('v1');
  mode = 'gone-slow';
  const slow = heard.post(query, {}, A);
  await new Promise((r) => setTimeout(r, 200));
  expect(await purge(heard.origin, TOKEN, { catalogId: 'LATE3' })).toBeLessThan(300);
  mode = 'v2';
  await new Promise((r) => setTimeout(r, 20));
  expect((await other.post(query, {}, A)).body.data.p.data[0].version).toBe('v2');
  expect((await slow).body.errors[0].extensions.code).toBe('NOT_FOUND');
  await new Promise((r) => setTimeout(r, 300));
  mode = 'down';
  const there = (await other.post(query, {}, A)).body;
  expect(there.errors, JSON.stringify(there)).toBeUndefined();
  expect(there.data.p.data[0].version).toBe('v2');
  expect(there.extensions.stale).toHaveLength(1);
});
