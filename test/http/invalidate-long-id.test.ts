import type { IncomingMessage, ServerResponse } from 'node:http';
import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';

const fresh = (req: IncomingMessage, res: ServerResponse) => {
  res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=60' });
  res.end(JSON.stringify({ status: 200, meta: { languageId: null }, data: [{ url: req.url }] }));
};

const servers = closedAfterEach();
const token = 'purge-long-id-admin-token';

// MAX_ID_LENGTH may be raised to 4,096: every id the façade queries (and caches answers for) must be purgeable by
// POST /cache/invalidate, or its cached copies outlive the catalog's publish.
it('purges the answers of a catalog whose id MAX_ID_LENGTH allows, however long', async () => {
  const { upstream, facade } = await servers.start(fresh, { MAX_ID_LENGTH: '2048', CACHE_ADMIN_TOKEN: token });
  const id = `C${'x'.repeat(1_499)}`;
  const query = `{ catalogProducts(catalogId: "${id}") }`;
  expect((await facade.post(query)).body.errors).toBeUndefined();
  expect((await facade.post(query)).body.errors).toBeUndefined();
  // The second was served from the façade's caches.
  expect(upstream.requests).toHaveLength(1);
  const purge = await facade.request('/cache/invalidate', {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ catalogId: id }),
  });
  expect(purge.status).toBe(200);
  expect((await facade.post(query)).body.errors).toBeUndefined();
  expect(upstream.requests).toHaveLength(2);
});

// A client that escapes every non-ASCII character (Python's json.dumps) writes 6 bytes of body for each; an id over
// MAX_ID_LENGTH (counted in characters, as requests count it) is no id a request could have used.
it('reads an id of MAX_ID_LENGTH characters sent escaped, and refuses one longer', async () => {
  const { facade } = await servers.start(fresh, { MAX_ID_LENGTH: '1000', CACHE_ADMIN_TOKEN: token });
  const purge = (id: string) =>
    facade.request('/cache/invalidate', {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ catalogId: id }).replace(
        /[^\x00-\x7f]/g,
        (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
      ),
    });
  expect((await purge('é'.repeat(1_000))).status).toBe(200);
  expect((await purge('é'.repeat(1_001))).status).toBe(400);
});
