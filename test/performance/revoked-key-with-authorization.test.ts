import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';

// docs/operations.md, "A key the PIM refused": once the PIM answers 401 to a key it had accepted, nothing the HTTP
// cache, the parsed answers or the cache of results hold of that key from before is served. The default
// PIM_FORWARD_HEADERS are `x-api-key, authorization`: a caller that sends both (a user token riding along on its key)
// is the same key to the PIM, while the caches partition by both. `public`: an answer to a call with Authorization is
// kept by the HTTP cache only so (RFC 9111).
const KEY = 'key-of-a-123';
const caller = { 'x-api-key': KEY, authorization: 'Bearer user-token-of-a' };
let revoked = false;
const pim = (req: IncomingMessage, res: ServerResponse) => {
  if (revoked && req.headers['x-api-key'] === KEY) {
    res.writeHead(401, { 'content-type': 'application/json' });
    return void res.end('{"status":401,"meta":{},"error":"API key revoked"}');
  }
  res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'public, max-age=300' });
  res.end(
    JSON.stringify({ status: 200, meta: { languageId: null }, data: [{ url: req.url, secret: 'catalog-of-A' }] }),
  );
};
const q = (id: string) => `{ p: catalogProducts(catalogId: "${id}") }`;
const settings = { PIM_RETRIES: '0', PIM_BREAKER_THRESHOLD: '1000' };

describe('a revoked key sent with an Authorization header beside it', () => {
  const servers = closedAfterEach();

  it('gets no fresh answer from the HTTP cache once the PIM answered it 401 (results cache off)', async () => {
    revoked = false;
    const { facade } = await servers.start(pim, { ...settings, RESPONSE_CACHE_MAX_BYTES: '0' });
    expect((await facade.post(q('U2'), {}, caller)).body.data.p.data[0].secret).toBe('catalog-of-A');
    revoked = true;
    expect((await facade.post(q('U1'), {}, caller)).body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    const after = (await facade.post(q('U2'), {}, caller)).body;
    expect(after.data?.p ?? null, 'the revoked key got its cached catalog').toBeNull();
  });

  it('gets no whole result from the cache of results once the PIM answered it 401', async () => {
    revoked = false;
    const { facade } = await servers.start(pim, settings);
    const path = `/graphql?query=${encodeURIComponent(q('U2'))}`;
    expect((await facade.get(path, caller)).body.data.p.data[0].secret).toBe('catalog-of-A');
    revoked = true;
    const refused = (await facade.post(q('U1'), {}, caller)).body;
    expect(refused.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    const after = await facade.get(path, caller);
    expect(after.body.data?.p ?? null, 'the revoked key got its cached catalog').toBeNull();
  });
});
