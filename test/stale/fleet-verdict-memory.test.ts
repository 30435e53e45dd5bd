// @module-tag redis-server
import { describe, expect, it } from 'vitest';
import { untilConnected } from '../helpers/redis.ts';
import { useRedisFleet } from '../helpers/redis-fleet.ts';
import { faults, startUpstream } from '../helpers/upstream.ts';
import { answerFor } from './reads.ts';

// The PIM's own 404 (its envelope) or 403 ends the kept copy of that URL and key "so a deleted group gets no older
// answer at the next outage" (docs/operations.md). Heard by one replica, it ends that replica's copy and Redis's; the
// other replica still holds the copy in memory and serves it, stale, at the next outage.
describe('a verdict heard by one replica of a fleet sharing Redis', () => {
  const fleet = useRedisFleet({
    upstream: () => startUpstream(answerFor('v1')),
    env: { PIM_RETRIES: '0', PIM_BREAKER_THRESHOLD: '1000', PIM_CACHE: 'false' },
  });
  const A = { 'x-api-key': 'key-of-a-123' };
  const group = (id: string) => `{ g: classificationGroup(classificationId: "K1", classificationGroupId: "${id}") }`;

  it.each([
    [404, 'NOT_FOUND'],
    [403, 'FORBIDDEN'],
  ])('a %i ends the copy the other replica holds in memory too', async (status, code) => {
    const { upstream, replicas, redis } = fleet;
    const [heard, other] = [replicas[0]!, replicas[1]!];
    const id = `G${status}`;
    await untilConnected(redis, 4);
    upstream.respond(answerFor('v1'));
    expect((await other.post(group(id), {}, A)).body.errors).toBeUndefined();
    upstream.respond(faults.status(status, `{"status":${status},"meta":{},"error":"No Classification found"}`));
    expect((await heard.post(group(id), {}, A)).body.errors[0].extensions.code).toBe(code);
    upstream.respond(faults.status(503));
    // The replica that heard the verdict serves no older answer: the outage's error.
    const here = (await heard.post(group(id), {}, A)).body;
    expect(here.extensions?.stale).toBeUndefined();
    // Nor may the other: the group is gone (or forbidden) for this key.
    const there = (await other.post(group(id), {}, A)).body;
    expect(there.extensions?.stale).toBeUndefined();
    expect(there.errors[0].extensions.code).toBe('UPSTREAM_ERROR');
  });

  // The replica that heard the verdict reads its own record back without the margin another's clock needs: the group
  // restored and read again right after, that copy is the last good one.
  it('a copy read after the verdict its replica heard still stands in', async () => {
    const { upstream, replicas, redis } = fleet;
    const heard = replicas[0]!;
    await untilConnected(redis, 4);
    upstream.respond(answerFor('v1'));
    expect((await heard.post(group('R1'), {}, A)).body.errors).toBeUndefined();
    upstream.respond(faults.status(404, '{"status":404,"meta":{},"error":"No Classification found"}'));
    expect((await heard.post(group('R1'), {}, A)).body.errors[0].extensions.code).toBe('NOT_FOUND');
    upstream.respond(answerFor('v2'));
    expect((await heard.post(group('R1'), {}, A)).body.data.g.data[0].version).toBe('v2');
    upstream.respond(faults.status(503));
    const { body } = await heard.post(group('R1'), {}, A);
    expect(body.errors, JSON.stringify(body)).toBeUndefined();
    expect(body.data.g.data[0].version).toBe('v2');
    expect(body.extensions.stale).toHaveLength(1);
  });
});
