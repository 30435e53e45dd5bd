// @module-tag redis-server
import { describe, expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { useRedisFleet } from '../helpers/redis-fleet.ts';
import { untilConnected } from '../helpers/redis.ts';
import { faults, startUpstream } from '../helpers/upstream.ts';
import { answerFor } from './reads.ts';

// A 401 is the PIM's word on the key, not on one URL: the revoked key gets none of its older answers at the next
// outage, for any URL, on any replica. On main it ended only the copy of the URL that heard it, on that replica.
const A = { 'x-api-key': 'key-of-a-123' };
const B = { 'x-api-key': 'key-of-b-456' };
const revoked = faults.status(401, '{"status":401,"meta":{},"error":"API key revoked"}');
const products = (id: string) => `{ p: catalogProducts(catalogId: "${id}") }`;
const settings = { PIM_RETRIES: '0', PIM_BREAKER_THRESHOLD: '1000' };

describe('one instance', () => {
  const servers = closedAfterEach();

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
});

describe('a fleet sharing Redis', () => {
  const fleet = useRedisFleet({ upstream: () => startUpstream(answerFor('v1')), env: settings });

  it('a 401 heard by one replica ends the key’s copies on the others, in memory and in Redis', async () => {
    const { upstream, replicas, redis } = fleet;
    const [heard, other] = [replicas[0]!, replicas[1]!];
    await untilConnected(redis, 4);
    // The other replica holds R1 in memory; R2 only the first read, so the other finds it in Redis.
    for (const id of ['R1', 'R2']) await heard.post(products(id), {}, A);
    await other.post(products('R1'), {}, A);
    upstream.respond(revoked);
    expect((await heard.post(products('R0'), {}, A)).body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    upstream.respond(faults.status(503));
    // Replicas read the fleet's record every second: within a few, none serves the revoked key an older answer.
    const deadline = Date.now() + 5_000;
    let served: unknown[] = [];
    do {
      served = [];
      for (const id of ['R1', 'R2']) served.push((await other.post(products(id), {}, A)).body.extensions?.stale);
      if (served.every((stale) => stale === undefined)) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    } while (Date.now() < deadline);
    expect(served).toEqual([undefined, undefined]);
    expect((await heard.post(products('R2'), {}, A)).body.extensions?.stale).toBeUndefined();
  });

  // A made-up key (no copy anywhere) is refused on every call: its 401s must not grow the record every replica reads.
  it('records a revocation only where the key had copies: made-up keys add nothing', async () => {
    const { upstream, replicas, redis } = fleet;
    upstream.respond(revoked);
    const before = await redis.client.hgetall('pim-graphql:invalidated');
    for (let i = 0; i < 5; i++) await replicas[i % 2]!.post(products('R1'), {}, { 'x-api-key': `made-up-key-${i}` });
    expect(await redis.client.hgetall('pim-graphql:invalidated')).toEqual(before);
    expect(Object.keys(before).filter((field) => field.startsWith('credential:'))).toHaveLength(1);
  });
});
