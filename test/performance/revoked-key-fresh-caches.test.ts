import type { IncomingMessage } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { productsOf as q, revocablePim, SECRET } from '../helpers/revocable-pim.ts';

// A credential the PIM has revoked (it now answers 401 to every call of it) kept reading the catalog from the façade's
// caches of fresh answers. The façade treats a 401 as "the PIM's word on the key, whatever the URL" for its last good
// copies (docs/operations.md, test/stale/revoked-key.test.ts), but the HTTP cache, the parsed answers and the cache of
// whole results kept answering it for the rest of the upstream's max-age. Whom a 401 refuses: the caller's X-API-KEY,
// whatever Authorization rides along with it (the caches partition by both), else the caller's own token sent beside
// the server's key (PIM_API_KEY, which goes with every call: its share recorded nothing).
const KEY = 'key-of-a-123';
const TOKEN = 'Bearer token-of-user-a-123';
const settings = { PIM_RETRIES: '0', PIM_BREAKER_THRESHOLD: '1000' };
const credentials: Array<{ name: string; caller: Record<string, string>; env: Record<string, string> }> = [
  { name: 'a key', caller: { 'x-api-key': KEY }, env: {} },
  { name: 'a key with an Authorization beside it', caller: { 'x-api-key': KEY, authorization: TOKEN }, env: {} },
  {
    name: "a caller's token beside the server's key",
    caller: { authorization: TOKEN },
    env: { PIM_API_KEY: 'server-key-123456' },
  },
];

describe.each(credentials)('$name the PIM revoked', ({ caller, env }) => {
  const servers = closedAfterEach();
  const isRevoked = (req: IncomingMessage) =>
    caller['x-api-key'] === undefined ? req.headers.authorization === TOKEN : req.headers['x-api-key'] === KEY;
  const revoked = () => revocablePim(isRevoked);

  it('gets no fresh answer from the HTTP cache once the PIM answered it 401 (results cache off)', async () => {
    const pim = revoked();
    const { facade } = await servers.start(pim.handler, { ...settings, ...env, RESPONSE_CACHE_MAX_BYTES: '0' });
    expect((await facade.post(q('U2'), {}, caller)).body.data.p.data[0].secret).toBe(SECRET);
    pim.state = 'revoked';
    expect((await facade.post(q('U1'), {}, caller)).body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    // The PIM has just refused this credential: the catalog it read before must not be handed to it any more.
    const after = (await facade.post(q('U2'), {}, caller)).body;
    expect(after.data?.p ?? null, 'the revoked credential got its cached catalog').toBeNull();
  });

  it('gets no whole result from the cache of results once the PIM answered it 401', async () => {
    const pim = revoked();
    const { facade } = await servers.start(pim.handler, { ...settings, ...env });
    const path = `/graphql?query=${encodeURIComponent(q('U2'))}`;
    expect((await facade.get(path, caller)).body.data.p.data[0].secret).toBe(SECRET);
    pim.state = 'revoked';
    expect((await facade.post(q('U1'), {}, caller)).body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    const after = await facade.get(path, caller);
    expect(after.body.data?.p ?? null, 'the revoked credential got its cached catalog').toBeNull();
  });

  // A credential leaves the list of those the PIM accepted once more than a thousand others have been accepted since
  // its last use (a portal with a key or a token per user); its cached answers may still be fresh for hours.
  it('gets no fresh answer from the HTTP cache once 1,100 other credentials were accepted before its 401', async () => {
    const pim = revoked();
    const { facade } = await servers.start(pim.handler, { ...settings, ...env, RESPONSE_CACHE_MAX_BYTES: '0' });
    expect((await facade.post(q('U2'), {}, caller)).body.data.p.data[0].secret).toBe(SECRET);
    let user = 0;
    const others = async () => {
      while (user < 1_100) {
        const other: Record<string, string> =
          caller['x-api-key'] === undefined
            ? { authorization: `Bearer user-${user++}` }
            : { 'x-api-key': `key-of-user-${user++}` };
        await facade.post(q('C'), {}, other);
      }
    };
    await Promise.all(Array.from({ length: 8 }, others));
    pim.state = 'revoked';
    expect((await facade.post(q('U1'), {}, caller)).body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    const after = (await facade.post(q('U2'), {}, caller)).body;
    expect(after.data?.p ?? null, 'the revoked credential got its cached catalog').toBeNull();
  });

  // A slow search the PIM accepted before revoking the key comes back after another request of the key heard the 401.
  it.each([
    ['results cache off (HTTP cache and parsed answers)', { RESPONSE_CACHE_MAX_BYTES: '0' }],
    ['results cache on', {}],
  ])('%s: an answer accepted before the 401, back after it, is not served after it', async (_name, cache) => {
    const pim = revocablePim(isRevoked, (req) => (req.url?.includes('SLOW') ? 600 : 0));
    const { facade } = await servers.start(pim.handler, { ...settings, ...env, ...cache });
    expect((await facade.post(q('U0'), {}, caller)).body.data.p.data[0].secret).toBe(SECRET);
    const path = `/graphql?query=${encodeURIComponent(q('SLOW'))}`;
    const slow = facade.get(path, caller);
    await sleep(200);
    pim.state = 'revoked';
    expect((await facade.post(q('U1'), {}, caller)).body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    expect((await slow).body.data.p.data[0].secret).toBe(SECRET);
    const after = await facade.get(path, caller);
    expect(after.body.data?.p ?? null, 'the revoked credential got the answer cached after its 401').toBeNull();
  });
});

describe("a caller's token revoked beside the server's key", () => {
  const servers = closedAfterEach();

  // Every 401 but the server key's is remembered: a key the PIM refused while it was still being provisioned, then
  // accepted, must have what it reads since cached as any other key's.
  it('leaves a key refused while provisioned, then accepted, what is cached since', async () => {
    const pim = revocablePim((req) => req.headers['x-api-key'] === 'key-being-provisioned');
    const { facade, upstream } = await servers.start(pim.handler, { ...settings, RESPONSE_CACHE_MAX_BYTES: '0' });
    const key = { 'x-api-key': 'key-being-provisioned' };
    pim.state = 'revoked';
    expect((await facade.post(q('U1'), {}, key)).body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    pim.state = 'ok';
    for (let i = 0; i < 2; i++) expect((await facade.post(q('U2'), {}, key)).body.data.p.data[0].secret).toBe(SECRET);
    expect(upstream.requests.filter((r) => r.url.includes('U2'))).toHaveLength(1);
  });

  it('leaves keyless callers their cached answers: its 401 is no word on the server key', async () => {
    const pim = revocablePim((req) => req.headers.authorization === TOKEN);
    const { facade, upstream } = await servers.start(pim.handler, { ...settings, PIM_API_KEY: 'server-key-123456' });
    const path = `/graphql?query=${encodeURIComponent(q('U2'))}`;
    expect((await facade.get(path)).body.data.p.data[0].secret).toBe(SECRET);
    pim.state = 'revoked';
    expect((await facade.post(q('U1'), {}, { authorization: TOKEN })).body.errors[0].extensions.code).toBe(
      'UNAUTHENTICATED',
    );
    expect((await facade.get(path)).body.data.p.data[0].secret).toBe(SECRET);
    expect(upstream.requests).toHaveLength(2);
  });
});
