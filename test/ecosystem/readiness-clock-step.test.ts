import { afterEach, expect, it, vi } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { echo, faults } from '../helpers/upstream.ts';

const servers = closedAfterEach();
afterEach(() => void vi.useRealTimers());

// A probe the PIM did not answer holds the checks of the next second (readiness.ts). Timed on the wall clock, a clock
// stepped back (NTP, a resumed VM) held them for as long as the step: 503 without a probe while the PIM was back.
it('a probe not answered holds readiness at most a second, even after the clock steps back', async () => {
  const { upstream, facade } = await servers.start(faults.status(503), { PIM_RETRIES: '0' });
  expect((await facade.get('/readiness')).status).toBe(503);
  upstream.respond(echo);
  // Date alone: timers and I/O stay real.
  vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true });
  vi.setSystemTime(Date.now() - 60_000);
  // The hold's second (the protocol's time).
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  expect((await facade.get('/readiness')).status).toBe(200);
});

// The answer's age was timed on the wall clock too: stepped back, it kept an old answer recent, 200 without a probe for
// as long as the step, while the PIM was down.
it('an answered probe counts for at most the max age, even after the clock steps back', async () => {
  const { upstream, facade } = await servers.start(echo, { PIM_RETRIES: '0', READINESS_MAX_AGE_MS: '1000' });
  expect((await facade.get('/readiness')).status).toBe(200);
  upstream.respond(faults.status(503));
  vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true });
  vi.setSystemTime(Date.now() - 60_000);
  // Past the max age (the protocol's time).
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  const probes = upstream.requests.length;
  expect((await facade.get('/readiness')).status).toBe(503);
  expect(upstream.requests.length, 'a probe asked the PIM').toBeGreaterThan(probes);
});
