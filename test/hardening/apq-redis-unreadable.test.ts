// @module-tag redis-server
import { expect, it, onTestFinished } from 'vitest';
import { byHash, register, sha256 } from '../ecosystem/persisted-client.ts';
import { closedAfterEach } from '../helpers/facade.ts';
import { startRedis } from '../helpers/redis.ts';
import { echo } from '../helpers/upstream.ts';

const servers = closedAfterEach();

// docs/operations.md, Redis: "An entry read from Redis that this version cannot read (cut short, or written in
// another shape) is a miss". An APQ document in Redis is looked up by its SHA-256, but what comes back is executed
// without checking that it is the document of that hash. A document cut short (or another one under the key) is then
// a GraphQL syntax error (or another operation's answer) for every client naming that hash, for APQ_TTL_MS (a day):
// an APQ link resends the document only on PersistedQueryNotFound, so the operation fails until the key expires.
it('an APQ document in Redis that is not the document of its hash is a miss (PersistedQueryNotFound)', async () => {
  const redis = await startRedis();
  onTestFinished(() => redis.stop());
  const { facade } = await servers.start(echo, { REDIS_URL: redis.url, REDIS_TIMEOUT_MS: '2000' });
  const document = 'query Page { p: catalogProducts(catalogId: "C1") }';
  const key = `pim-graphql:apq:${sha256(document)}`;
  // Registered again until stored: commands sent before the connection is up fail at once (no offline queue).
  await expect
    .poll(
      async () => (expect((await register(facade, document)).body.errors).toBeUndefined(), redis.client.exists(key)),
    )
    .toBe(1);
  expect((await byHash(facade, document)).body.errors).toBeUndefined();

  // The stored document, cut short (its TTL kept).
  await redis.client.set(key, document.slice(0, -4), 'KEEPTTL');
  const cut = await byHash(facade, document);
  expect(cut.body.errors?.[0]?.extensions?.code).toBe('PERSISTED_QUERY_NOT_FOUND');

  // Another document under the key: never executed in place of the one the client named.
  await redis.client.set(key, '{ __typename }', 'KEEPTTL');
  const other = await byHash(facade, document);
  expect(other.body.data).toBeUndefined();
  expect(other.body.errors?.[0]?.extensions?.code).toBe('PERSISTED_QUERY_NOT_FOUND');
}, 20_000);
