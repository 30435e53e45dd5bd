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

  // Each instance remembers the last 10,000 revoked keys whose copies it held apart from the others, so made-up keys'
  // 401s, which keep no copy, never push a real one out: a key that kept its copies under one user's Authorization is
  // one of those whatever Authorization its 401 came on.
  it('gets no last good copy from before the 401 after a flood of made-up keys', { timeout: 180_000 }, async () => {
    const pim = revocablePim(
      (req) => req.headers['x-api-key'] === KEY || /^made-up-/.test(`${req.headers['x-api-key']}`),
    );
    const { facade } = await servers.start(pim.handler, settings);
    expect((await facade.post(q('U2'), {}, userA)).body.data.p.data[0].secret).toBe(SECRET);
    pim.state = 'revoked';
    expect((await facade.post(q('U1'), {}, userB)).body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    // Made-up keys, each refused once: 10,000 and a few more.
    let sent = 0;
    const one = async () => {
      while (sent < 10_100) await facade.post(q('X'), {}, { 'x-api-key': `made-up-${sent++}` });
    };
    await Promise.all(Array.from({ length: 12 }, one));
    pim.state = 'down';
    const after = (await facade.post(q('U2'), {}, userA)).body;
    expect(after.data?.p ?? null, 'the revoked key got its last good copy after the flood').toBeNull();
  });
});
