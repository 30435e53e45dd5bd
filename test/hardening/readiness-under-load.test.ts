import { setTimeout as sleep } from 'node:timers/promises';
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
    await sleep(200);
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) {
      statuses.push((await facade.get('/readiness')).status);
      await sleep(150);
    }
    await Promise.all(load);
    expect(statuses).toEqual([200, 200, 200]);
    const probes = upstream.requests.filter((r) => r.url.includes('/classifications/readiness-probe/'));
    expect(probes.length).toBeGreaterThanOrEqual(3);
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
      for (let i = 0; i < 3; i++) {
        expect((await probed.get('/readiness')).status).toBe(200);
        await sleep(200);
      }
      expect(cached.requests).toHaveLength(3);
    } finally {
      await probed.close();
      await cached.close();
    }
  });
});
