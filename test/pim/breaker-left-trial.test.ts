import { setTimeout as sleep } from 'node:timers/promises';
import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { echo, type UpstreamHandler } from '../helpers/upstream.ts';

const servers = closedAfterEach();
const HALF_OPEN_MS = 1_000;
const q = (id: string) => `{ p: catalogProducts(catalogId: "${id}") }`;

// A half-open breaker lets one trial call through. When that call's client cancels it after it reached the PIM (which
// answers it anyway, now that the call keeps its slot until then), the abandoned call proves nothing: it must not
// open the breaker again for everyone for another half-open delay.
it('an abandoned half-open trial call does not reopen the breaker', async () => {
  let down = false;
  const handler: UpstreamHandler = (req, res) => {
    if (down) return void res.writeHead(500).end();
    setTimeout(() => !res.destroyed && echo(req, res), 300);
  };
  const { facade, upstream } = await servers.start(handler, {
    PIM_BREAKER_THRESHOLD: '2',
    PIM_BREAKER_HALF_OPEN_MS: String(HALF_OPEN_MS),
    PIM_RETRIES: '0',
    PIM_CACHE: 'false',
  });
  down = true;
  for (let i = 0; facade.app.upstream.breaker !== 'open'; i++) {
    expect(i).toBeLessThan(20);
    await facade.post(q(`F${i}`));
  }
  down = false;
  await sleep(HALF_OPEN_MS + 100);
  const before = upstream.requests.length;
  const controller = new AbortController();
  const left = fetch(facade.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: q('T') }),
    signal: controller.signal,
  }).catch(() => 'cancelled');
  await expect.poll(() => upstream.requests.length).toBeGreaterThan(before);
  controller.abort();
  expect(await left).toBe('cancelled');
  // The probe stood trial in its place and found the PIM back.
  await expect.poll(() => facade.app.upstream.breaker, { timeout: 3_000 }).toBe('closed');
  const next = await facade.post(q('N'));
  expect(next.body.errors).toBeUndefined();
}, 20_000);
