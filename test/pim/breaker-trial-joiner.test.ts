import { setTimeout as sleep } from 'node:timers/promises';
import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { echo, type UpstreamHandler } from '../helpers/upstream.ts';

const servers = closedAfterEach();
const HALF_OPEN_MS = 800;
const TIMEOUT_MS = 3_000;
const q = (id: string) => `{ p: catalogProducts(catalogId: "${id}") }`;

// docs/operations.md: "After PIM_BREAKER_HALF_OPEN_MS one trial call goes through (calls arriving meanwhile wait for its
// outcome, at most PIM_TIMEOUT_MS, then fail with UPSTREAM_UNAVAILABLE ...". A request that joined another's call
// (coalescing) asked again when that call stopped waiting, and waited a whole PIM_TIMEOUT_MS more: twice in all, or
// its budget's end (BUDGET_EXCEEDED) where that came first. Bounds, not timings: the defect took twice as long.
it.each([
  ['10000', 'UPSTREAM_UNAVAILABLE', 'true'],
  // Control: without coalescing each request waits once, as documented (passes on HEAD).
  ['10000', 'UPSTREAM_UNAVAILABLE', 'false'],
  // A budget under twice PIM_TIMEOUT_MS: the joiner, held past PIM_TIMEOUT_MS, runs out of it instead.
  ['5000', 'UPSTREAM_UNAVAILABLE', 'true'],
])(
  'half-open (budget %s ms): two requests asking the same field while the trial hangs both wait at most PIM_TIMEOUT_MS, then get %s (PIM_COALESCE=%s)',
  async (budget, code, coalesce) => {
    let mode: 'fail' | 'hang' = 'fail';
    const handler: UpstreamHandler = (req, res) => {
      if (mode === 'fail') return void res.writeHead(500).end();
      if (mode === 'hang') return;
      echo(req, res);
    };
    const { facade, upstream } = await servers.start(handler, {
      PIM_BREAKER_THRESHOLD: '2',
      PIM_BREAKER_HALF_OPEN_MS: String(HALF_OPEN_MS),
      PIM_TIMEOUT_MS: String(TIMEOUT_MS),
      PIM_RETRIES: '0',
      PIM_CACHE: 'false',
      GRAPHQL_BUDGET_MS: budget,
      PIM_COALESCE: coalesce,
    });
    for (let i = 0; facade.app.upstream.breaker !== 'open'; i++) {
      expect(i).toBeLessThan(20);
      await facade.post(q(`F${i}`));
    }
    mode = 'hang';
    await sleep(HALF_OPEN_MS + 100);
    upstream.requests.length = 0;
    const trial = facade.post(q('T'));
    await expect.poll(() => upstream.requests.length, { interval: 10 }).toBe(1);
    const started = Date.now();
    const timed = (p: Promise<any>) => p.then((a) => ({ ...a, took: Date.now() - started }));
    const first = timed(facade.post(q('W')));
    // A second request for the same field joins the first one's call (coalescing).
    await sleep(50);
    const second = timed(facade.post(q('W')));
    const [a, b] = await Promise.all([first, second]);
    await trial;
    const codes = [a, b].map((x) => x.body.errors.map((e: any) => e.extensions.code));
    expect({ codes, tookA: a.took < TIMEOUT_MS + 1_500, tookB: b.took < TIMEOUT_MS + 1_500 }).toEqual({
      codes: [[code], [code]],
      tookA: true,
      tookB: true,
    });
  },
);
