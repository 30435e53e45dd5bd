import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';

// A key the PIM has revoked (it now answers 401 to every call of it) kept reading the catalog from the façade's caches
// of fresh answers. The façade treats a 401 as "the PIM's word on the key, whatever the URL" for its last-known-good
// copies (docs/operations.md, test/stale/revoked-key.test.ts), but the HTTP cache / parsed answers and the cache of
// whole results kept answering that key for the rest of the upstream's max-age.
const A = { 'x-api-key': 'key-of-a-123' };
let revoked = false;
const pim = (req: IncomingMessage, res: ServerResponse) => {
  if (revoked && req.headers['x-api-key'] === A['x-api-key']) {
    res.writeHead(401, { 'content-type': 'application/json' });
    return void res.end('{"status":401,"meta":{},"error":"API key revoked"}');
  }
  res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=300' });
  res.end(
    JSON.stringify({ status: 200, meta: { languageId: null }, data: [{ url: req.url, secret: 'catalog-of-A' }] }),
  );
};
const q = (id: string) => `{ p: catalogProducts(catalogId: "${id}") }`;
const settings = { PIM_RETRIES: '0', PIM_BREAKER_THRESHOLD: '1000' };

describe('a key the PIM revoked', () => {
  const servers = closedAfterEach();

  it('gets no fresh answer from the HTTP cache once the PIM answered it 401 (results cache off)', async () => {
    revoked = false;
    const { facade } = await servers.start(pim, { ...settings, RESPONSE_CACHE_MAX_BYTES: '0' });
    expect((await facade.post(q('U2'), {}, A)).body.data.p.data[0].secret).toBe('catalog-of-A');
    revoked = true;
    const refused = (await facade.post(q('U1'), {}, A)).body;
    expect(refused.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    // The PIM has just refused this key: the catalog it read before must not be handed to it any more.
    const after = (await facade.post(q('U2'), {}, A)).body;
    expect(after.data?.p ?? null).toBeNull();
  });

  it('gets no whole result from the cache of results once the PIM answered it 401', async () => {
    revoked = false;
    const { facade } = await servers.start(pim, settings);
    const path = `/graphql?query=${encodeURIComponent(q('U2'))}`;
    expect((await facade.get(path, A)).body.data.p.data[0].secret).toBe('catalog-of-A');
    revoked = true;
    const refused = (await facade.post(q('U1'), {}, A)).body;
    expect(refused.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    const after = await facade.get(path, A);
    expect(after.body.data?.p ?? null).toBeNull();
  });
});
