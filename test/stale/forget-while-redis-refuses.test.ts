// @module-tag redis-server
import { expect, it, onTestFinished } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { startRedis } from '../helpers/redis.ts';
import { faults } from '../helpers/upstream.ts';
import { answerFor } from '../stale/reads.ts';

const servers = closedAfterEach();

// docs/operations.md, Stale answers: "a 401, 403, 404 or 410 also ends the kept copy of that URL and credential
// (here and in Redis), so a revoked key or a deleted group gets no older answer at the next outage".
// The façade that heard the PIM's 404 drops its memory copy and sends Redis a delete. When Redis cannot take that
// delete (a failover demoted it: READONLY; a partition: timed out), the copy in Redis lives on, and the next outage
// the same façade finds it there and serves the deleted group's old data, marked stale.
it.each([
  ['404 (a deleted catalog)', 404, 'NOT_FOUND'],
  ['401 (a revoked key)', 401, 'UNAUTHENTICATED'],
])(
  'a %s heard while Redis refused writes still ends the kept copy at the next outage',
  async (_name, status, code) => {
    const redis = await startRedis();
    onTestFinished(() => redis.stop());
    const { upstream, facade } = await servers.start(answerFor('v1'), {
      REDIS_URL: redis.url,
      REDIS_TIMEOUT_MS: '2000',
      PIM_RETRIES: '0',
      PIM_BREAKER_THRESHOLD: '1000',
    });
    const caller = { 'x-api-key': 'key-of-b-456' };
    const ask = async () => (await facade.post('{ p: catalogProducts(catalogId: "GONE") }', {}, caller)).body;

    expect((await ask()).data.p.data[0].version).toBe('v1');
    // Kept in Redis too.
    await expect.poll(async () => (await redis.client.keys('pim-graphql:lkg:*')).length).toBe(1);

    // Redis is demoted (failover): writes, the delete among them, are refused; the PIM says the catalog is gone.
    await redis.client.call('REPLICAOF', '127.0.0.1', '1');
    upstream.respond(faults.status(status, '{"error":"gone"}'));
    const verdict = await ask();
    expect(verdict.errors[0].extensions.code).toBe(code);
    expect(verdict.extensions?.stale).toBeUndefined();
    // Redis is master again.
    await redis.client.call('REPLICAOF', 'NO', 'ONE');

    // The next outage: the PIM fails with 500. The deleted catalog's data must not come back.
    upstream.respond(faults.status(500, '{"error":"down"}'));
    const during = await ask();
    expect(during.extensions?.stale).toBeUndefined();
    expect(during.data?.p ?? null).toBeNull();
    expect(during.errors[0].extensions.code).toBe('UPSTREAM_ERROR');
  },
  20_000,
);
