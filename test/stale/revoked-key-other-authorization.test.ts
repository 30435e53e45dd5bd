import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';

// docs/operations.md, "A key the PIM refused": once the PIM answers 401 to a key it had accepted, nothing cached of
// that key from before is served, "whatever other forwarded header rode along with it", and "the last good copies end
// the same way". Two users' tokens ride along on one key (the default forwarded headers are x-api-key, authorization).
const KEY = 'key-of-a-123';
const userA = { 'x-api-key': KEY, authorization: 'Bearer user-token-of-a' };
const userB = { 'x-api-key': KEY, authorization: 'Bearer user-token-of-b' };
let state: 'ok' | 'revoked' | 'down' = 'ok';
const pim = (req: IncomingMessage, res: ServerResponse) => {
  if (state === 'down') {
    res.writeHead(503, { 'content-type': 'application/json' });
    return void res.end('{"status":503,"meta":{},"error":"down"}');
  }
  if (state === 'revoked' && req.headers['x-api-key'] === KEY) {
    res.writeHead(401, { 'content-type': 'application/json' });
    return void res.end('{"status":401,"meta":{},"error":"API key revoked"}');
  }
  res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'public, max-age=300' });
  res.end(
    JSON.stringify({ status: 200, meta: { languageId: null }, data: [{ url: req.url, secret: 'catalog-of-A' }] }),
  );
};
const q = (id: string) => `{ p: catalogProducts(catalogId: "${id}") }`;
const settings = { PIM_RETRIES: '0', PIM_BREAKER_THRESHOLD: '1000', RESPONSE_CACHE_MAX_BYTES: '0' };

describe('a revoked key, refused on one Authorization, asked with another at the next outage', () => {
  const servers = closedAfterEach();

  it('gets no last good copy from before the 401', async () => {
    state = 'ok';
    const { facade } = await servers.start(pim, settings);
    expect((await facade.post(q('U2'), {}, userA)).body.data.p.data[0].secret).toBe('catalog-of-A');
    state = 'revoked';
    expect((await facade.post(q('U1'), {}, userB)).body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    state = 'down';
    const after = (await facade.post(q('U2'), {}, userA)).body;
    expect(after.data?.p ?? null, 'the revoked key got its last good copy').toBeNull();
  });
});
