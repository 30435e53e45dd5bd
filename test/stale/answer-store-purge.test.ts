import { expect, it, vi } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { purge } from './reads.ts';
import type { UpstreamHandler } from '../helpers/upstream.ts';

const TOKEN = 'a-long-enough-admin-token';
const servers = closedAfterEach();

// Answers of about 600 bytes, fresh for five minutes; the first call of MASTER is held until released.
let published = 'v1';
let masterCalls = 0;
const held: Array<() => void> = [];
const pim: UpstreamHandler = (req, res) => {
  const version = published;
  const send = () => {
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=300' });
    const data = [{ url: req.url, version, padding: 'p'.repeat(500) }];
    res.end(JSON.stringify({ status: 200, meta: { languageId: null }, data }));
  };
  if (req.url?.includes('/MASTER/') && masterCalls++ === 0) held.push(send);
  else send();
};
const url = (query: string) => `/graphql?query=${encodeURIComponent(query)}`;
const versionOf = (answer: { body: any }, field: string) => answer.body.data?.[field]?.data?.[0]?.version;

// A fresh hit of the HTTP cache opens an entry of the parsed answers that the hit's own answer fills; one whose answer
// never comes back (refused past the request's bytes here) leaves it open. Any later answer of that URL filled it,
// a call sent before a purge too: its old body was then served as fresh for the whole max-age after the purge.
it('an answer read before a purge never becomes the parsed answer served fresh after it', async () => {
  const { upstream, facade } = await servers.start(pim, { CACHE_ADMIN_TOKEN: TOKEN, PIM_MAX_REQUEST_BYTES: '1024' });
  // FILL is in the HTTP cache.
  expect((await facade.get(url('{ f: catalogProducts(catalogId: "FILL") }'))).status).toBe(200);
  // A call of MASTER reads v1, and is still out when the catalog is published and the façade purged.
  const before = facade.get(url('{ m: catalogProducts(catalogId: "MASTER") }'));
  await vi.waitFor(() => expect(held).toHaveLength(1));
  published = 'v2';
  expect(await purge(facade.origin, TOKEN, { catalogId: 'MASTER' })).toBe(200);
  // (undici dates an answer by its Date, whole seconds: one of the purge's own second counts as read before it.)
  await new Promise((resolve) => setTimeout(resolve, 1_050 - (Date.now() % 1_000)));
  // A new call reads v2, which the HTTP cache keeps.
  expect(versionOf(await facade.get(url('{ m2: catalogProducts(catalogId: "MASTER") }')), 'm2')).toBe('v2');
  // A hit of v2 whose answer this request cannot take (FILL's bytes and its own pass PIM_MAX_REQUEST_BYTES).
  const both = await facade.get(
    url('{ f: catalogProducts(catalogId: "FILL") m: catalogProducts(catalogId: "MASTER") }'),
  );
  expect(both.body.errors?.[0]?.extensions?.code).toBe('UPSTREAM_TOO_LARGE');
  // The call sent before the purge comes back with v1.
  held.shift()!();
  expect(versionOf(await before, 'm')).toBe('v1');
  const calls = upstream.requests.length;
  expect(versionOf(await facade.get(url('{ m3: catalogProducts(catalogId: "MASTER") }')), 'm3')).toBe('v2');
  expect(upstream.requests.length).toBe(calls);
});
