// @module-tag redis-server
import { afterEach, describe, expect, it, vi } from 'vitest';
import { closedAfterEach, type Facade } from '../helpers/facade.ts';
import { useRedisFleet } from '../helpers/redis-fleet.ts';
import { untilConnected } from '../helpers/redis.ts';
import { faults, startUpstream } from '../helpers/upstream.ts';
import { answerFor, withHeaders } from './reads.ts';

// A 401 is the PIM's word on the key, not on one URL: the revoked key gets none of its older answers at the next
// outage, for any URL. On main it ended only the copy of the URL that heard it.
const A = { 'x-api-key': 'key-of-a-123' };
const B = { 'x-api-key': 'key-of-b-456' };
const revoked = faults.status(401, '{"status":401,"meta":{},"error":"API key revoked"}');
const products = (id: string) => `{ p: catalogProducts(catalogId: "${id}") }`;
const settings = { PIM_RETRIES: '0', PIM_BREAKER_THRESHOLD: '1000' };
// Past the 10,000 revocations (or keys) an instance remembers: `count` requests of as many keys named `name-<n>`.
const manyKeys = async (facade: Facade, count: number, name: string) => {
  let sent = 0;
  const one = async () => {
    while (sent < count) await facade.post(products('X'), {}, { 'x-api-key': `${name}-${sent++}` });
  };
  await Promise.all(Array.from({ length: 32 }, one));
};

describe('one instance', () => {
  const servers = closedAfterEach();
  afterEach(() => void vi.useRealTimers());

  it('a 401 on one URL ends the key’s copies of every URL; another key keeps its own', async () => {
    const { upstream, facade } = await servers.start(answerFor('v1'), settings);
    for (const key of [A, B]) for (const id of ['U1', 'U2']) await facade.post(products(id), {}, key);
    upstream.respond(revoked);
    expect((await facade.post(products('U1'), {}, A)).body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    upstream.respond(faults.status(503));
    const outage = (await facade.post(products('U2'), {}, A)).body;
    expect(outage.extensions?.stale).toBeUndefined();
    expect(outage.errors[0].extensions.code).toBe('UPSTREAM_ERROR');
    const other = (await facade.post(products('U2'), {}, B)).body;
    expect(other.extensions.stale).toHaveLength(1);
    expect(other.data.p.data[0]).toMatchObject({ key: 'B', version: 'v1' });
  });

  it('a 403 stays the word on its URL: a key may be refused one resource and keep the others', async () => {
    const { upstream, facade } = await servers.start(answerFor('v1'), settings);
    for (const id of ['U1', 'U2']) await facade.post(products(id), {}, A);
    upstream.respond(faults.status(403, '{"status":403,"meta":{},"error":"not yours"}'));
    expect((await facade.post(products('U1'), {}, A)).body.errors[0].extensions.code).toBe('FORBIDDEN');
    upstream.respond(faults.status(503));
    expect((await facade.post(products('U2'), {}, A)).body.extensions.stale).toHaveLength(1);
  });

  it('a key the PIM accepts again after its 401 has its newer answers stand in again', async () => {
    const { upstream, facade } = await servers.start(answerFor('v1'), settings);
    await facade.post(products('U1'), {}, A);
    upstream.respond(revoked);
    await facade.post(products('U1'), {}, A);
    upstream.respond(answerFor('v2'));
    await facade.post(products('U2'), {}, A);
    upstream.respond(faults.status(503));
    expect((await facade.post(products('U1'), {}, A)).body.extensions?.stale).toBeUndefined();
    const newer = (await facade.post(products('U2'), {}, A)).body;
    expect(newer.extensions.stale).toHaveLength(1);
    expect(newer.data.p.data[0].version).toBe('v2');
  });

  // The call was sent, and the PIM accepted the key, before the 401 was heard: its answer is one the key had before.
  // Its time was once worked out when the answer came, so a wall clock stepped forward meanwhile (NTP steps past
  // 128 ms) moved it past the 401.
  it.each([0, 2_000, -2_000])(
    'the copy of a call sent before the 401 and answered after it does not stand in (clock stepped %i ms)',
    async (step) => {
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      const { upstream, facade } = await servers.start(
        (req, res) => (req.url!.includes('U1') ? revoked(req, res) : void held.then(() => answerFor('v1')(req, res))),
        settings,
      );
      const slow = facade.post(products('U2'), {}, A);
      await expect.poll(() => upstream.requests.length).toBe(1);
      const stepClock = () =>
        vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true }).setSystemTime(Date.now() + step);
      // Back, before the 401 is heard (the 401 then looks older than the call); forward, after it.
      if (step < 0) stepClock();
      expect((await facade.post(products('U1'), {}, A)).body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
      if (step > 0) stepClock();
      release();
      expect((await slow).body.data.p.data[0].version).toBe('v1');
      upstream.respond(faults.status(503));
      expect((await facade.post(products('U2'), {}, A)).body.extensions?.stale).toBeUndefined();
    },
  );

  // Made-up keys keep no copy: their 401s are remembered apart, and never push out the revocation of a key that kept
  // one, before its 401 (A) or after it, from a call sent before it (C). Whether a key kept one is told by the copies
  // held: the last 10,000 keys to keep one forgot A while its copies were still held (review of 2c7b397).
  it('a flood of made-up keys’ 401s does not bring back a revoked key’s copies', { timeout: 240_000 }, async () => {
    const C = { 'x-api-key': 'key-of-c-789' };
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const { upstream, facade } = await servers.start(answerFor('v1'), settings);
    for (const id of ['U1', 'U2']) await facade.post(products(id), {}, A);
    await manyKeys(facade, 10_050, 'other-key');
    upstream.respond((req, res) =>
      req.url!.includes('C2') ? void held.then(() => answerFor('v1')(req, res)) : revoked(req, res),
    );
    const slow = facade.post(products('C2'), {}, C);
    await expect.poll(() => upstream.requests.length).toBe(1);
    for (const key of [A, C])
      expect((await facade.post(products('U1'), {}, key)).body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    release();
    expect((await slow).body.data.p.data[0].version).toBe('v1');
    await manyKeys(facade, 10_050, 'made-up-key');
    upstream.respond(faults.status(503));
    expect((await facade.post(products('U2'), {}, A)).body.extensions?.stale).toBeUndefined();
    expect((await facade.post(products('C2'), {}, C)).body.extensions?.stale).toBeUndefined();
  });

  // Coalesced into a call sent before the 401, a request sent after it has that call's answer, as old as the call.
  it('a request that joined a call sent before the 401 does not keep its copy', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const { upstream, facade } = await servers.start(
      (req, res) => (req.url!.includes('U1') ? revoked(req, res) : void held.then(() => answerFor('v1')(req, res))),
      settings,
    );
    const first = new AbortController();
    const body = JSON.stringify({ query: products('U2') });
    const headers = { 'content-type': 'application/json', ...A };
    const leaving = facade.request('/graphql', { method: 'POST', headers, body, signal: first.signal }).catch(() => {});
    await expect.poll(() => upstream.requests.length).toBe(1);
    expect((await facade.post(products('U1'), {}, A)).body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    const joiner = facade.post(products('U2'), {}, A);
    // The first caller leaves once the joiner is in (a protocol's order, not a wait for the server); the call goes on.
    await new Promise((resolve) => setTimeout(resolve, 200));
    first.abort();
    await leaving;
    // And the server has seen it leave before the answer comes.
    await new Promise((resolve) => setTimeout(resolve, 200));
    release();
    expect((await joiner).body.data.p.data[0].version).toBe('v1');
    expect(upstream.requests.filter((r) => r.url.includes('U2'))).toHaveLength(1);
    upstream.respond(faults.status(503));
    expect((await facade.post(products('U2'), {}, A)).body.extensions?.stale).toBeUndefined();
  });
});

describe('a fleet sharing Redis', () => {
  const fleet = useRedisFleet({ upstream: () => startUpstream(answerFor('v1')), env: settings });
  // A key of each test's own: the fleet's record of another test's 401 to a shared one would end its copies for it.
  let keys = 0;
  const fresh = () => ({ 'x-api-key': `key-of-fleet-test-${++keys}` });

  it('a 401 ends the key’s copies the instance finds in Redis too, kept there by another', async () => {
    const { upstream, replicas, redis } = fleet;
    const A = fresh();
    const [heard, other] = [replicas[0]!, replicas[1]!];
    await untilConnected(redis, 4);
    await other.post(products('R2'), {}, A);
    await other.post(products('R2'), {}, B);
    upstream.respond(revoked);
    expect((await heard.post(products('R0'), {}, A)).body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    upstream.respond(faults.status(503));
    const outage = (await heard.post(products('R2'), {}, A)).body;
    expect(outage.extensions?.stale).toBeUndefined();
    expect(outage.errors[0].extensions.code).toBe('UPSTREAM_ERROR');
    expect((await heard.post(products('R2'), {}, B)).body.extensions.stale).toHaveLength(1);
  });

  // The instance that kept the copies never heard the 401: it served them to the revoked key at the next outage, from
  // its memory, until it heard a 401 to that key itself. The 401 is recorded in Redis, read before a copy stands in.
  it('a 401 heard by one instance ends the key’s copies another keeps in memory', async () => {
    const { upstream, replicas, redis } = fleet;
    const A = fresh();
    const [heard, other] = [replicas[0]!, replicas[1]!];
    await untilConnected(redis, 4);
    upstream.respond(answerFor('v1'));
    await other.post(products('M2'), {}, A);
    await other.post(products('M2'), {}, B);
    const records = (await redis.client.keys('*revoked:*')).length;
    upstream.respond(revoked);
    expect((await heard.post(products('M0'), {}, A)).body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    await expect.poll(async () => (await redis.client.keys('*revoked:*')).length).toBe(records + 1);
    upstream.respond(faults.status(503));
    const outage = (await other.post(products('M2'), {}, A)).body;
    expect(outage.extensions?.stale).toBeUndefined();
    expect(outage.errors[0].extensions.code).toBe('UPSTREAM_ERROR');
    const kept = (await other.post(products('M2'), {}, B)).body;
    expect(kept.extensions.stale).toHaveLength(1);
    expect(kept.data.p.data[0]).toMatchObject({ key: 'B', version: 'v1' });
  });

  // The instance that heard the 401 never kept the key's copies (another did, in Redis): its 401 was among the made-up
  // keys', and a flood of theirs pushed it out (review of 2c7b397). The fleet's record of it stays.
  it(
    'a flood of made-up keys’ 401s does not bring back a revoked key’s copy kept in Redis',
    { timeout: 180_000 },
    async () => {
      const { upstream, replicas, redis } = fleet;
      const A = fresh();
      const [heard, other] = [replicas[0]!, replicas[1]!];
      await untilConnected(redis, 4);
      upstream.respond(answerFor('v1'));
      await other.post(products('K2'), {}, A);
      upstream.respond(revoked);
      expect((await heard.post(products('K0'), {}, A)).body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
      await manyKeys(heard, 10_050, 'made-up-key');
      upstream.respond(faults.status(503));
      expect((await heard.post(products('K2'), {}, A)).body.extensions?.stale).toBeUndefined();
    },
  );

  // The record was read once, as the call began, and that reading decided the stand-in however long the call took
  // (review of cda2f86): it is read when the call has failed, at most once a second a key.
  it('a 401 recorded by another instance while the call was out ends the copy when that call fails', async () => {
    const { upstream, replicas, redis } = fleet;
    const A = fresh();
    const [heard, other] = [replicas[0]!, replicas[1]!];
    await untilConnected(redis, 4);
    upstream.respond(answerFor('v1'));
    await other.post(products('W2'), {}, A);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    upstream.respond((req, res) =>
      req.url!.includes('W2') ? void held.then(() => faults.status(503)(req, res)) : revoked(req, res),
    );
    const records = (await redis.client.keys('*revoked:*')).length;
    const slow = other.post(products('W2'), {}, A);
    await expect.poll(() => upstream.requests.filter((r) => r.url.includes('W2')).length).toBe(1);
    expect((await heard.post(products('W0'), {}, A)).body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    await expect.poll(async () => (await redis.client.keys('*revoked:*')).length).toBe(records + 1);
    // Past a second of reading (the protocol's time).
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    release();
    const outage = (await slow).body;
    expect(outage.extensions?.stale).toBeUndefined();
    expect(outage.errors[0].extensions.code).toBe('UPSTREAM_ERROR');
  });

  // The record lasted a day (the settings' longest window) while a copy kept before it may stand in as long as the
  // PIM's own stale-if-error says (review of cda2f86): it lasts as long as the copies its key kept.
  it('the record of a 401 lasts as long as the copies kept before it', async () => {
    const { upstream, replicas, redis } = fleet;
    const A = fresh();
    const [heard, other] = [replicas[0]!, replicas[1]!];
    await untilConnected(redis, 4);
    upstream.respond(withHeaders('v1', { 'cache-control': 'max-age=1, stale-if-error=604800' }));
    await other.post(products('L2'), {}, A);
    const ttls = async (pattern: string) =>
      Promise.all((await redis.client.keys(pattern)).map((name) => redis.client.pttl(name)));
    await expect.poll(async () => Math.max(...(await ttls('*lkg:*')))).toBeGreaterThan(7 * 86_400_000 - 60_000);
    const records = (await ttls('*revoked:*')).length;
    upstream.respond(revoked);
    expect((await heard.post(products('L0'), {}, A)).body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    await expect.poll(async () => (await ttls('*revoked:*')).length).toBe(records + 1);
    expect(Math.max(...(await ttls('*revoked:*')))).toBeGreaterThanOrEqual(Math.max(...(await ttls('*lkg:*'))));
  });

  // Made-up keys keep no copy anywhere: their 401s are no record, so a flood of them writes nothing to Redis.
  it('the 401 of a key that kept no copy anywhere writes no record', async () => {
    const { upstream, replicas, redis } = fleet;
    await untilConnected(redis, 4);
    const before = (await redis.client.keys('*revoked:*')).length;
    upstream.respond(revoked);
    for (let i = 0; i < 20; i++) await replicas[i % 2]!.post(products('N0'), {}, { 'x-api-key': `made-up-${i}` });
    // Both instances' writes are out (a command sent after them is answered after them).
    for (const replica of replicas) await replica.post(products('N0'), {}, { 'x-api-key': 'made-up-last' });
    expect(await redis.client.keys('*revoked:*')).toHaveLength(before);
  });

  // Another instance's call, sent before this one heard the 401 and answered after, writes its copy to Redis after it.
  it('a copy another instance keeps from a call sent before the 401 does not stand in', async () => {
    const { upstream, replicas, redis } = fleet;
    const A = fresh();
    const [heard, other] = [replicas[0]!, replicas[1]!];
    await untilConnected(redis, 4);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    upstream.respond((req, res) =>
      req.url!.includes('F2') ? void held.then(() => answerFor('v1')(req, res)) : revoked(req, res),
    );
    const slow = other.post(products('F2'), {}, A);
    await expect.poll(() => upstream.requests.length).toBe(1);
    expect((await heard.post(products('F0'), {}, A)).body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    release();
    expect((await slow).body.data.p.data[0].version).toBe('v1');
    await expect.poll(async () => (await redis.client.keys('*lkg:*')).length).toBeGreaterThan(0);
    upstream.respond(faults.status(503));
    expect((await heard.post(products('F2'), {}, A)).body.extensions?.stale).toBeUndefined();
  });

  // Replayed by the HTTP cache (shared in Redis), an answer says its age in whole seconds only: within half a second of
  // its call, `Age: 0` made the replay's copy look asked for after the 401 heard in between. Now the instance that heard
  // the 401 replays nothing of the key from before it (docs/operations.md, A key the PIM refused), even a key it never
  // saw accepted itself: its request reaches the PIM, and when that fails no copy from before the 401 stands in.
  it('the instance that heard the 401 gets no replay of an answer to a call sent before it, nor its copy', async () => {
    const { upstream, replicas, redis } = fleet;
    const A = fresh();
    const [heard, other] = [replicas[0]!, replicas[1]!];
    await untilConnected(redis, 4);
    upstream.respond((req, res) =>
      req.url!.includes('H0')
        ? revoked(req, res)
        : withHeaders('v1', { 'cache-control': 'max-age=60', date: new Date().toUTCString() })(req, res),
    );
    // Early in a second of the Date header, so that a replay's Age would round to 0.
    while (Date.now() % 1_000 > 50) await new Promise((resolve) => setTimeout(resolve, 5));
    await other.post(products('H2'), {}, A);
    expect((await heard.post(products('H0'), {}, A)).body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    upstream.respond(faults.status(503));
    const after = (await heard.post(products('H2'), {}, A)).body;
    expect(after.errors?.[0]?.extensions?.code).toBe('UPSTREAM_ERROR');
    expect(after.data?.p ?? null).toBeNull();
    expect(after.extensions?.stale).toBeUndefined();
    // Asked of the PIM (the recording starts anew with the 503s), not replayed.
    expect(upstream.requests.filter((r) => r.url.includes('H2'))).toHaveLength(1);
  });

  // A copy's times in Redis are the clock of the instance that kept it: one 2 s ahead made a copy kept before the 401
  // look newer than it. Redis's copies are judged with a margin for clocks (5 s).
  it('a copy kept before the 401 by an instance whose clock is ahead does not stand in', async () => {
    const { upstream, replicas, redis } = fleet;
    const A = fresh();
    const [heard, other] = [replicas[0]!, replicas[1]!];
    await untilConnected(redis, 4);
    upstream.respond(answerFor('v1'));
    await other.post(products('S2'), {}, A);
    const copies = async () => {
      const names = await redis.client.keys('*lkg:*');
      const values = await Promise.all(names.map(async (name) => [name, await redis.client.get(name)] as const));
      return values.filter(([, value]) => value?.includes('S2'));
    };
    await expect.poll(async () => (await copies()).length).toBe(1);
    const [[name, stored]] = (await copies()) as [[string, string]];
    const newline = stored.indexOf('\n');
    const times = JSON.parse(stored.slice(0, newline)) as Record<string, number>;
    for (const field of Object.keys(times)) times[field]! += 2_000;
    await redis.client.set(name, `${JSON.stringify(times)}\n${stored.slice(newline + 1)}`, 'KEEPTTL');
    upstream.respond(revoked);
    expect((await heard.post(products('S0'), {}, A)).body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    upstream.respond(faults.status(503));
    expect((await heard.post(products('S2'), {}, A)).body.extensions?.stale).toBeUndefined();
  });
});

// The server's own key (PIM_API_KEY) refused is the operator's fault, not the keyless callers' answers' end.
describe('the server key refused', () => {
  const servers = closedAfterEach();

  it.each([
    ['by the PIM', '{"status":401,"meta":{},"error":"API key revoked"}', 'application/json'],
    ['by an auth proxy page', '<html>Sign in</html>', 'text/html'],
  ])('%s ends no keyless copy', async (_kind, body, type) => {
    const { upstream, facade } = await servers.start(answerFor('v1'), { ...settings, PIM_API_KEY: 'server-key-1' });
    for (const id of ['U1', 'U2']) await facade.post(products(id));
    upstream.respond(faults.status(401, body, { 'content-type': type }));
    expect((await facade.post(products('U1'))).body.errors[0].extensions.code).toBe('SERVER_CREDENTIALS_REJECTED');
    upstream.respond(faults.status(503));
    for (const id of ['U1', 'U2']) expect((await facade.post(products(id))).body.extensions.stale).toHaveLength(1);
  });
});
