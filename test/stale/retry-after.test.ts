import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { echo, faults } from '../helpers/upstream.ts';

const servers = closedAfterEach();

// The retries sit inside the stale step: a throttled PIM (429 or 503 with Retry-After) made a request wait out the
// Retry-After, up to its whole budget, before the last good answer it already held stood in.
it.each([
  [429, 'UPSTREAM_RATE_LIMITED'],
  [503, 'UPSTREAM_ERROR'],
])(
  'serves the kept answer of a call refused with %i and Retry-After at once',
  async (status, reason) => {
    const { upstream, facade } = await servers.start(echo, {});
    const query = '{ p: catalogProducts(catalogId: "A") }';
    expect((await facade.post(query)).body.errors).toBeUndefined();
    upstream.reset();
    upstream.respond(faults.status(status, '', { 'retry-after': '5' }));
    const started = performance.now();
    const { body } = await facade.post('{ again: catalogProducts(catalogId: "A") }');
    expect(body.extensions.stale).toEqual([expect.objectContaining({ path: ['again'], reason })]);
    // One call, no retry after it: waiting out even one Retry-After would take 5 s.
    expect(upstream.requests).toHaveLength(1);
    expect(performance.now() - started).toBeLessThan(2_500);
  },
  30_000,
);
