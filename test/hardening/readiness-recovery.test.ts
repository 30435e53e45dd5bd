import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { faults } from '../helpers/upstream.ts';
import { closedAfterEach } from '../helpers/facade.ts';

const { startUpstream, startFacade } = closedAfterEach();

const HALF_OPEN_MS = 1_000;
// How often the test polls /readiness, as a load balancer would.
const INTERVAL_MS = 200;

describe('readiness after an upstream outage, with no GraphQL traffic', () => {
  it('stays 503 while the upstream fails, then turns 200 within the half-open delay plus one interval', async () => {
    const upstream = await startUpstream(faults.status(500, '{"error":"down"}'));
    const facade = await startFacade(upstream.url, {
      PIM_BREAKER_THRESHOLD: '3',
      PIM_BREAKER_HALF_OPEN_MS: String(HALF_OPEN_MS),
      READINESS_MAX_AGE_MS: '100',
    });
    const readiness = async () => (await fetch(`${facade.origin}/readiness`)).status;

    // Down for longer than two half-open delays: the breaker opens, and every probe it lets through fails.
    const downUntil = Date.now() + 2.5 * HALF_OPEN_MS;
    while (Date.now() < downUntil) {
      expect(await readiness()).toBe(503);
      await sleep(INTERVAL_MS);
    }
    expect(facade.app.upstream.breaker).not.toBe('closed');
    // Three opened the breaker; each half-open delay since let one more probe through.
    const failedProbes = upstream.requests.length;

    upstream.respond(faults.ok);
    const healed = Date.now();
    while ((await readiness()) !== 200) {
      expect(Date.now() - healed).toBeLessThan(HALF_OPEN_MS + INTERVAL_MS + 1_500);
      await sleep(INTERVAL_MS);
    }
    expect(facade.app.upstream.breaker).toBe('closed');
    expect(await readiness()).toBe(200);
    expect(failedProbes).toBeGreaterThanOrEqual(4);
    // Readiness alone spoke to the upstream: every call was its probe.
    expect(upstream.requests.every((r) => r.url.includes('/classifications/readiness-probe/'))).toBe(true);
  });
});
