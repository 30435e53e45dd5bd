import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { echo } from '../helpers/upstream.ts';

const servers = closedAfterEach();

// pim_cache_outcomes_total counts how callers' upstream loads were served (hit, miss, stale…); the readiness probe's
// call asks past every cache by design. A PIM answering its made-up id with a 2xx counted it a `miss`, one every
// probe period per replica: on a quiet service, most of the misses an operator saw.
it('does not count the readiness probe among the cache outcomes', async () => {
  const { facade } = await servers.start(echo);
  expect((await fetch(`${facade.origin}/readiness`)).status).toBe(200);
  const metrics = await (await fetch(`${facade.origin}/metrics`)).text();
  expect(metrics).not.toMatch(/^pim_cache_outcomes_total\{[^}]*\} [1-9]/m);
});
