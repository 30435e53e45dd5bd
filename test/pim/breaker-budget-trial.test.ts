import { setTimeout as sleep } from 'node:timers/promises';
import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import type { UpstreamHandler } from '../helpers/upstream.ts';

const servers = closedAfterEach();
const HALF_OPEN_MS = 1_000;
const BUDGET_MS = 2_500;
const q = (id: string) => `{ p: catalogProducts(catalogId: "${id}") }`;

// docs/operations.md: "calls arriving meanwhile wait for its [the trial's] outcome, at most PIM_TIMEOUT_MS", and the
// request budget bounds queueing and calls together: "when it runs out, the fields still waiting fail with
// BUDGET_EXCEEDED". A half-open trial cut by its budget hands its caller BUDGET_EXCEEDED and the probe
// stands trial after it: the callers waiting inside the breaker wait for the trial call AND the probe, past their own
// budget and past PIM_TIMEOUT_MS, unless they leave at their own budget.
it('a caller waiting on a half-open trial cut by its budget is answered within its own budget', async () => {
  let mode: 'fail' | 'hang' = 'fail';
  const handler: UpstreamHandler = (_req, res) => {
    if (mode === 'fail') return void res.writeHead(500).end();
    // hang: never answer (the socket is closed by the façade or at the end of the test)
  };
  const { facade } = await servers.start(handler, {
    PIM_BREAKER_THRESHOLD: '2',
    PIM_BREAKER_HALF_OPEN_MS: String(HALF_OPEN_MS),
    PIM_RETRIES: '0',
    PIM_CACHE: 'false',
    PIM_TIMEOUT_MS: '3000',
    GRAPHQL_BUDGET_MS: String(BUDGET_MS),
  });
  for (let i = 0; facade.app.upstream.breaker !== 'open'; i++) {
    expect(i).toBeLessThan(20);
    await facade.post(q(`F${i}`));
  }
  mode = 'hang';
  await sleep(HALF_OPEN_MS + 100);
  const trial = facade.post(q('T'));
  await sleep(100);
  const started = Date.now();
  const waiter = await facade.post(q('W'));
  const took = Date.now() - started;
  await trial;
  expect(waiter.body.errors?.[0]?.extensions?.code).toBeDefined();
  // Its budget plus slack for the answer to be written.
  expect(`${waiter.body.errors[0].extensions.code} after ${took} ms`).toBe(
    `${waiter.body.errors[0].extensions.code} after ${Math.min(took, BUDGET_MS + 400)} ms`,
  );
}, 30_000);
