import { setTimeout as sleep } from 'node:timers/promises';
import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { echo, type UpstreamHandler } from '../helpers/upstream.ts';

const servers = closedAfterEach();
const HALF_OPEN_MS = 1_000;
const q = (id: string) => `{ p: catalogProducts(catalogId: "${id}") }`;

/**
 * A façade whose PIM answered `pages` pages (C0, C1, …; the HTTP cache holds them fresh for five minutes), then
 * failed until the breaker opened; `back()` brings the PIM back.
 */
async function openedAfterReading(pages: number) {
  let down = false;
  const handler: UpstreamHandler = (req, res) => {
    if (down) return void res.writeHead(500).end();
    res.setHeader('cache-control', 'max-age=300');
    echo(req, res);
  };
  const { facade } = await servers.start(handler, {
    PIM_BREAKER_THRESHOLD: '2',
    PIM_BREAKER_HALF_OPEN_MS: String(HALF_OPEN_MS),
    PIM_RETRIES: '0',
  });
  for (let i = 0; i < pages; i++) expect((await facade.post(q(`C${i}`))).body.errors).toBeUndefined();
  down = true;
  for (let i = 0; facade.app.upstream.breaker !== 'open'; i++) {
    expect(i).toBeLessThan(20);
    await facade.post(q(`F${i}`));
  }
  return { facade, back: () => void (down = false) };
}

// The one trial call of a half-open breaker may be answered by the HTTP cache, which proves nothing of the PIM: it
// reopened the breaker, and with pages kept fresh (a shared Redis cache) a PIM that was back stayed refused.
it('closes the breaker once the PIM is back, whatever call happens to be the half-open trial', async () => {
  const { facade, back } = await openedAfterReading(3);
  back();

  const failed: string[] = [];
  for (let i = 0; i < 2; i++) {
    await sleep(HALF_OPEN_MS + 100);
    // Another operation reading a page read before: no hit of the whole-result cache, a hit of the HTTP cache.
    const old = await facade.post(`{ again: catalogProducts(catalogId: "C${i}") }`);
    expect(old.body.errors).toBeUndefined();
    const fresh = await facade.post(q(`N${i}`));
    if (fresh.body.errors) failed.push(String(fresh.body.errors[0].extensions.code));
  }
  expect(failed).toEqual([]);
  expect(facade.app.upstream.breaker).toBe('closed');
}, 20_000);

it('reopens when the probe standing trial for a cached answer fails, and still serves that answer', async () => {
  const { facade } = await openedAfterReading(1);
  await sleep(HALF_OPEN_MS + 100);
  const old = await facade.post('{ again: catalogProducts(catalogId: "C0") }');
  expect(old.body.errors).toBeUndefined();
  await expect.poll(() => facade.app.upstream.breaker).toBe('open');
}, 20_000);

// The probe that stands trial is the PIM answering as much as any call: readiness reads `answeredAt` when its own
// probe finds no free slot, and a breaker closed that way said the PIM had not answered since before the outage.
it('counts the probe standing trial as the PIM answering', async () => {
  const { facade, back } = await openedAfterReading(1);
  back();
  await sleep(HALF_OPEN_MS + 100);
  const before = performance.now();
  expect((await facade.post('{ again: catalogProducts(catalogId: "C0") }')).body.errors).toBeUndefined();
  await expect.poll(() => facade.app.upstream.breaker).toBe('closed');
  expect(facade.app.upstream.answeredAt).toBeGreaterThanOrEqual(before);
}, 20_000);
