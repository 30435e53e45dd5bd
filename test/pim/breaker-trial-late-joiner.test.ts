import { setTimeout as sleep } from 'node:timers/promises';
import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { echo, type UpstreamHandler } from '../helpers/upstream.ts';

const servers = closedAfterEach();
const HALF_OPEN_MS = 800;
const TIMEOUT_MS = 3_000;
const q = (id: string) => `{ p: catalogProducts(catalogId: "${id}") }`;

// A joiner that asks again when the shared call stops waiting for a half-open breaker's trial waits only the rest of
// its own PIM_TIMEOUT_MS (breaker-trial-joiner.test.ts). The first version of that fix put its shortened wait on the
// call it then started, which every later joiner shares: one that joined 2.4 s later, asking again into it, was cut
// off within 0.6 s and missed the trial's outcome (the PIM answering) that came within its own PIM_TIMEOUT_MS.
it('a late joiner re-asking into a call led by an earlier joiner still waits its own PIM_TIMEOUT_MS for the trial', async () => {
  let mode: 'fail' | 'hang' = 'fail';
  const handler: UpstreamHandler = (req, res) => {
    if (mode === 'fail') return void res.writeHead(500).end();
    const url = req.url ?? '';
    // The breaker's probe: answered (the PIM's 404 envelope) 1.2 s after it is sent; the trial 'T' hangs.
    if (url.includes('readiness-probe')) {
      setTimeout(() => {
        res
          .writeHead(404, { 'content-type': 'application/json' })
          .end(JSON.stringify({ status: 404, meta: {}, error: 'not found' }));
      }, 1_200);
      return;
    }
    if (url.includes('T')) return;
    echo(req, res);
  };
  const { facade, upstream } = await servers.start(handler, {
    PIM_BREAKER_THRESHOLD: '2',
    PIM_BREAKER_HALF_OPEN_MS: String(HALF_OPEN_MS),
    PIM_TIMEOUT_MS: String(TIMEOUT_MS),
    PIM_RETRIES: '0',
    PIM_CACHE: 'false',
    GRAPHQL_BUDGET_MS: '15000',
    PIM_COALESCE: 'true',
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
  const t0 = Date.now();
  const timed = (p: Promise<any>) => p.then((a) => ({ ...a, took: Date.now() - t0 }));
  const a = timed(facade.post(q('W'))); // leads the shared call
  await sleep(50);
  const b = timed(facade.post(q('W'))); // joins at once
  await sleep(2_400);
  const eJoined = Date.now() - t0;
  const e = timed(facade.post(q('W'))); // joins ~2.4 s later
  const [, , late] = await Promise.all([a, b, e]);
  await trial;
  const waited = late.took - eJoined;
  // The late joiner either got the data (the probe answered ~4.2 s after the trial went) or waited PIM_TIMEOUT_MS.
  expect({
    codes: (late.body.errors ?? []).map((x: any) => x.extensions.code),
    gotData: late.body.data?.p != null,
    waitedMs: waited >= TIMEOUT_MS - 200 || late.body.data?.p != null ? 'own wait' : waited,
  }).toEqual({ codes: [], gotData: true, waitedMs: 'own wait' });
});
