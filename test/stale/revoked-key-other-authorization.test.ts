import { describe, expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { productsOf as q, revocablePim, SECRET } from '../helpers/revocable-pim.ts';

// docs/operations.md, "A key the PIM refused": once the PIM answers 401 to a key it had accepted, nothing cached of
// that key from before is served, "whatever other forwarded header rode along with it", and "the last good copies end
// the same way". Two users' tokens ride along on one key (the default forwarded headers are x-api-key, authorization).
const KEY = 'key-of-a-123';
const userA = { 'x-api-key': KEY, authorization: 'Bearer user-token-of-a' };
const userB = { 'x-api-key': KEY, authorization: 'Bearer user-token-of-b' };
const settings = { PIM_RETRIES: '0', PIM_BREAKER_THRESHOLD: '1000', RESPONSE_CACHE_MAX_BYTES: '0' };

describe('a revoked key, refused on one Authorization, asked with another at the next outage', () => {
  const servers = closedAfterEach();

  it('gets no last good copy from before the 401', async () => {
    const pim = revocablePim((req) => req.headers['x-api-key'] === KEY);
    const { facade } = await servers.start(pim.handler, settings);
    expect((await facade.post(q('U2'), {}, userA)).body.data.p.data[0].secret).toBe(SECRET);
    pim.state = 'revoked';
    expect((await facade.post(q('U1'), {}, userB)).body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    pim.state = 'down';
    const after = (await facade.post(q('U2'), {}, userA)).body;
    expect(after.data?.p ?? null, 'the revoked key got its last good copy').toBeNull();
  });
});
