import type { Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect, it } from 'vitest';
import { unreadPost } from '../helpers/burst.ts';
import { closedAfterEach } from '../helpers/facade.ts';
import { echo } from '../helpers/upstream.ts';

const servers = closedAfterEach();

// 100 representations (FEDERATION_MAX_REPRESENTATIONS' default), each resolving to its key alone: no PIM call.
const representations = Array.from({ length: 100 }, (_, i) => ({ __typename: 'Catalog', catalogId: String(i) }));
// 15 aliases (GRAPHQL_MAX_ALIASES) of 3,900 characters each: a 63 KB body whose answer repeats them for every
// representation, 5.8 MB sent for nothing read from the PIM.
const aliasQuery = `query($r: [_Any!]!) { _entities(representations: $r) { ... on Catalog { ${Array.from(
  { length: 15 },
  (_, i) => `a${i}${'_'.repeat(3_900)}: __typename`,
).join(' ')} } } }`;
// One @stream label of 55,000 characters: each streamed item carries it.
const labelQuery = `query($r: [_Any!]!) { _entities(representations: $r) @stream(label: "${'L'.repeat(55_000)}") { __typename } }`;

it('bounds what one response sends by PIM_MAX_REQUEST_BYTES, names and labels echoed included', async () => {
  const { upstream, facade } = await servers.start(echo, { PIM_MAX_REQUEST_BYTES: '1000000' });
  const answer = await facade.post(aliasQuery, { r: representations });
  expect(answer.text.length, 'a 63 KB request made the server send this many bytes').toBeLessThan(1_000_000);
  expect(answer.body.errors?.[0]?.extensions?.code).toBe('UPSTREAM_TOO_LARGE');

  const streamed = await facade.post(labelQuery, { r: representations }, { accept: 'multipart/mixed' });
  expect(streamed.status).toBe(200);
  expect(streamed.text.length, 'a streamed answer sent this many bytes').toBeLessThan(1_000_000);
  expect(streamed.text).toContain('UPSTREAM_TOO_LARGE');
  expect(upstream.requests).toHaveLength(0);
});

it('counts an unread answer of echoed names toward PIM_MAX_INFLIGHT_BYTES', async () => {
  const { upstream, facade } = await servers.start(echo, {
    PIM_MAX_INFLIGHT_BYTES: '8000000',
    PIM_MAX_INFLIGHT_BYTES_PER_CREDENTIAL: '8000000',
  });
  const body = JSON.stringify({ query: aliasQuery, variables: { r: representations } });
  // Clients that never read: each answer waits in the server's memory (40 of them took it past 680 MB RSS).
  const readers: Socket[] = [];
  for (let i = 0; i < 3; i++) readers.push(await unreadPost(facade.port, body));
  await sleep(500);
  const answer = await facade.post(aliasQuery, { r: representations });
  expect(answer.text.length, 'the process held 3 unread 5.8 MB answers and built another').toBeLessThan(100_000);
  expect(answer.body.errors?.[0]?.extensions?.code).toBe('UPSTREAM_TOO_LARGE');
  expect(upstream.requests).toHaveLength(0);
  for (const reader of readers) reader.destroy();
});
