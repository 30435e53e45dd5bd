import { setTimeout as sleep } from 'node:timers/promises';
import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { faults } from '../helpers/upstream.ts';

const { start } = closedAfterEach();

// README, docs/operations.md: an operation whose @defer applies, from a client that takes no stream, is refused with
// 406 before it runs, nothing sent upstream. `@defer(if: $d)` with a nullable `$d` the client left out applies (the
// directive's own `if` defaults to true): the operation ran, its fields' calls reached the PIM, for a 406.
it.each([
  ['a nullable variable left out', 'query($d: Boolean) { ... @defer(if: $d) { catalogProducts(catalogId: "A") } }'],
  [
    'a nullable variable left out, beside a field not deferred',
    'query($s: Boolean) { catalogProducts(catalogId: "B") ... @defer(if: $s) { classificationGroups(classificationId: "C") } }',
  ],
])('refuses a @defer that applies through %s before any call', async (_name, query) => {
  const { facade, upstream } = await start(faults.ok, {});
  const res = await facade.post(query, {}, { accept: 'application/json' });
  expect(res.status).toBe(406);
  expect(res.body.errors[0].extensions.code).toBe('NOT_ACCEPTABLE');
  await sleep(100);
  expect(upstream.requests).toHaveLength(0);
});

// A non-null variable left out is the client's error, said as such (not a 406 that a retry with a stream would meet).
it('answers a required @defer variable left out with its own error, nothing sent', async () => {
  const { facade, upstream } = await start(faults.ok, {});
  const query = 'query($d: Boolean!) { ... @defer(if: $d) { catalogProducts(catalogId: "A") } }';
  const res = await facade.post(query, {}, { accept: 'application/json' });
  expect(res.body.errors[0].extensions.code).toBe('BAD_USER_INPUT');
  await sleep(100);
  expect(upstream.requests).toHaveLength(0);
});
