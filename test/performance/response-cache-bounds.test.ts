import type { IncomingMessage, ServerResponse } from 'node:http';
import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { cacheableEcho } from '../helpers/upstream.ts';

const servers = closedAfterEach();

// `big-<n>`: a page padded with n characters; fresh for a minute.
function padded(req: IncomingMessage, res: ServerResponse) {
  const n = Number(/\/catalogs\/big-(\d+)\//.exec(req.url ?? '')?.[1] ?? 0);
  res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=60' });
  res.end(JSON.stringify({ status: 200, meta: { languageId: null }, data: [{ url: req.url, pad: 'x'.repeat(n) }] }));
}

// The cache of results had no bound per entry: any caller (keyless too: one upstream read) with one result counted
// just under RESPONSE_CACHE_MAX_BYTES emptied every other caller's entries.
it('one request with a huge result does not evict the entries other callers filled', async () => {
  const bound = 8 * 2 ** 20;
  const { facade } = await servers.start(padded, { RESPONSE_CACHE_MAX_BYTES: String(bound) });
  const stats = () => facade.app.responses!.stats();
  // Ids of one width, so every key is as long and the counted size grows by exactly 2 a padded character.
  const page = (n: number) => `{ catalogProducts(catalogId: "big-${String(n).padStart(7, '0')}") }`;
  await facade.post(page(0));
  const overhead = stats().bytes;
  for (let i = 1; i <= 50; i++) expect((await facade.post(page(i))).body.errors).toBeUndefined();
  expect(stats().entries).toBe(51);
  const n = Math.floor((bound - overhead - 2_000) / 2);
  expect((await facade.post(page(n))).body.errors).toBeUndefined();
  expect(stats().entries).toBe(51);
});

// JSON.parse reads 1e400 as Infinity, which JSON.stringify writes as null: the key of `p: 1e400` was that of `p: null`.
it('an out-of-range Int (1e400) gets its BAD_USER_INPUT, not the cached result of `null`', async () => {
  const { facade } = await servers.start(cacheableEcho(60));
  const query = 'query P($id: ID!, $p: Int) { catalogProducts(catalogId: $id, page: $p) }';
  const send = (page: string) =>
    facade.request('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: `{"query":${JSON.stringify(query)},"variables":{"id":"x","p":${page}}}`,
    });
  expect((await send('1e400')).body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  expect((await send('null')).body.errors).toBeUndefined();
  const again = await send('1e400');
  expect(again.body.data).toBeUndefined();
  expect(again.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
});
