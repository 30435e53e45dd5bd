import { expect, it } from 'vitest';
import { faults } from '../helpers/upstream.ts';
import { closedAfterEach } from '../helpers/facade.ts';
import { aliasedCalls, postTimed } from '../helpers/burst.ts';

// A call identical to one another request has queued joins it (coalescing). The joined call must then
// wait no longer than the joiner's own call would: not behind the burst of the request that queued it.

const { start } = closedAfterEach();

const SLOW_MS = 1_000;
// Up to one call time for a connection, then the call itself, with room for a busy machine.
const OWN_CALL = 2 * SLOW_MS + 1_000;

const fields = aliasedCalls;

it("D3: a call that joins another request's queued call waits about one call time, not behind that request's burst", async () => {
  const { upstream, facade } = await start(faults.slowHeaders(SLOW_MS), {
    PIM_API_KEY: 'server-key-0001',
    PIM_CACHE: 'false',
  });
  const burst = new AbortController();
  // 60 calls of one credential, 12 at a time: five call times in all.
  const noisy = Array.from({ length: 4 }, (_, r) => postTimed(facade.origin, fields(`slow${r}`, 15), {}, burst.signal));
  try {
    await expect.poll(() => upstream.requests.length).toBeGreaterThanOrEqual(12);
    // The last call of the last request: queued behind its own request's other calls.
    const shared = 'slow3-14';
    const sent = () => upstream.requests.filter((r) => r.url.includes(`/${shared}/`)).length;
    expect(sent()).toBe(0);
    const quiet = await postTimed(facade.origin, `{ classificationGroups(classificationId: "${shared}") }`);
    expect(quiet.body.errors).toBeUndefined();
    expect(quiet.ms).toBeLessThan(OWN_CALL);
    // Still one upstream call for both requests.
    expect(sent()).toBe(1);
  } finally {
    burst.abort();
    await Promise.allSettled(noisy);
  }
}, 30_000);
