import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFacade, type Facade } from '../helpers/facade.ts';
import { faults, startUpstream, type Upstream } from '../helpers/upstream.ts';

const CALL_MS = 500;
const REQUESTS = 40;

let upstream: Upstream;
let facade: Facade;
beforeAll(async () => {
  upstream = await startUpstream(faults.slowHeaders(CALL_MS));
  // A tiny max age: every /readiness below really asks the upstream.
  facade = await startFacade(upstream.url, { READINESS_MAX_AGE_MS: '100', PIM_CACHE: 'false' });
});
afterAll(async () => {
  await facade?.close();
  await upstream?.close();
});

describe('readiness under ordinary load', () => {
  it(`stays 200 while ${REQUESTS} anonymous requests queue for a healthy upstream`, async () => {
    // Distinct ids, so nothing is shared: the anonymous partition holds its cap and the rest queue behind it.
    const load = Array.from({ length: REQUESTS }, (_, i) => facade.post(`{ catalogProducts(catalogId: "load-${i}") }`));
    // The anonymous partition's cap (three quarters of 16) is in flight: the rest queue.
    await expect.poll(() => upstream.requests.length, { interval: 20, timeout: 5_000 }).toBeGreaterThanOrEqual(12);
    const statuses: number[] = [];
    const probes = () => upstream.requests.filter((r) => r.url.includes('/classifications/readiness-probe/')).length;
    const check = async () => (statuses.push((await facade.get('/readiness')).status), probes());
    // Past READINESS_MAX_AGE_MS after its last answer, a check probes again.
    // Each step waits out a probe's call and the max age: allow it a few of both, not the poll's default second.
    for (let probed = 1; probed <= 3; probed++)
      await expect.poll(check, { interval: 20, timeout: 4 * CALL_MS + 2_000 }).toBeGreaterThanOrEqual(probed);
    await Promise.all(load);
    expect(new Set(statuses)).toEqual(new Set([200]));
  }, 30_000);
});

describe('readiness past the caches', () => {
  it('asks the upstream on every probe, even when its last answer is still fresh', async () => {
    const cached = await startUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=60' });
      res.end('{"status":200,"data":[]}');
    });
    const probed = await startFacade(cached.url, { READINESS_MAX_AGE_MS: '100' });
    try {
      // Past READINESS_MAX_AGE_MS a check probes again; each probe reaches the upstream.
      const check = async () => {
        expect((await probed.get('/readiness')).status).toBe(200);
        return cached.requests.length;
      };
      for (let probes = 1; probes <= 3; probes++) {
        await expect.poll(check, { interval: 20, timeout: 5_000 }).toBe(probes);
      }
    } finally {
      await probed.close();
      await cached.close();
    }
  });
});
