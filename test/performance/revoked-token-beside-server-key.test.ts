import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';

// UPSTREAM.md: "Some deployments sit behind a gateway that wants `Authorization` instead". The operator sets
// PIM_API_KEY too (keyless callers), default PIM_FORWARD_HEADERS (x-api-key, authorization). A caller sends its own
// Authorization; the gateway revokes that token (401). docs/operations.md, "A key the PIM refused": nothing the HTTP
// cache, the parsed answers or the cache of results hold of it from before is served, as the last good copies end.
const TOKEN = 'Bearer token-of-user-a-123';
const caller = { authorization: TOKEN };
let revoked = false;
const pim = (req: IncomingMessage, res: ServerResponse) => {
  if (revoked && req.headers.authorization === TOKEN) {
    res.writeHead(401, { 'content-type': 'application/json' });
    return void res.end('{"status":401,"meta":{},"error":"token revoked"}');
  }
  res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'public, max-age=300' });
  res.end(
    JSON.stringify({ status: 200, meta: { languageId: null }, data: [{ url: req.url, secret: 'catalog-of-A' }] }),
  );
};
const q = (id: string) => `{ p: catalogProducts(catalogId: "${id}") }`;
const settings = { PIM_API_KEY: 'server-key-123456', PIM_RETRIES: '0', PIM_BREAKER_THRESHOLD: '1000' };

describe('a caller token revoked at the gateway, PIM_API_KEY set beside it', () => {
  const servers = closedAfterEach();

  it('gets no fresh answer from the HTTP cache once its token was answered 401 (results cache off)', async () => {
    revoked = false;
    const { facade } = await servers.start(pim, { ...settings, RESPONSE_CACHE_MAX_BYTES: '0' });
    expect((await facade.post(q('U2'), {}, caller)).body.data.p.data[0].secret).toBe('catalog-of-A');
    revoked = true;
    expect((await facade.post(q('U1'), {}, caller)).body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    const after = (await facade.post(q('U2'), {}, caller)).body;
    expect(after.data?.p ?? null, 'the revoked token got its cached catalog').toBeNull();
  });

  it('gets no whole result from the cache of results once its token was answered 401', async () => {
    revoked = false;
    const { facade } = await servers.start(pim, settings);
    const path = `/graphql?query=${encodeURIComponent(q('U2'))}`;
    expect((await facade.get(path, caller)).body.data.p.data[0].secret).toBe('catalog-of-A');
    revoked = true;
    expect((await facade.post(q('U1'), {}, caller)).body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    const after = await facade.get(path, caller);
    expect(after.body.data?.p ?? null, 'the revoked token got its cached catalog').toBeNull();
  });

  it("answers keyless callers from the caches all the same: the token's 401 is no word on the server's key", async () => {
    revoked = false;
    const { facade, upstream } = await servers.start(pim, settings);
    const path = `/graphql?query=${encodeURIComponent(q('U2'))}`;
    expect((await facade.get(path)).body.data.p.data[0].secret).toBe('catalog-of-A');
    revoked = true;
    expect((await facade.post(q('U1'), {}, caller)).body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    expect((await facade.get(path)).body.data.p.data[0].secret).toBe('catalog-of-A');
    expect(upstream.requests).toHaveLength(2);
  });
});
