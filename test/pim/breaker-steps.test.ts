import { expect, it } from 'vitest';
import { createBreaker } from '../../src/pim/steps/breaker.ts';
import { pimError } from '../../src/pim/rest/errors.ts';
import type { Answer, CallOptions, Send } from '../../src/pim/rest/types.ts';
import type { PimRequest } from '../../src/pim/rest/endpoints.ts';

// The breaker step over a downstream this test settles by hand: each call waits until the test fails or answers it.
function harness() {
  const pending: Array<{ fail(): void }> = [];
  const below: Send = () =>
    new Promise<Answer>((_resolve, reject) =>
      pending.push({ fail: () => reject(pimError('UPSTREAM_TIMEOUT', new Error('hung'))) }),
    );
  let probes = 0;
  const breaker = createBreaker({
    breakerThreshold: 2,
    halfOpenAfterMs: 60_000,
    trialWaitMs: 60_000,
    probe: (send) => (probes++, send({ path: '/probe' } as PimRequest, {} as CallOptions)),
  });
  const call = breaker.layer(below);
  const settle = () => new Promise((resolve) => setTimeout(resolve, 10));
  return { breaker, pending, call, settle, probes: () => probes };
}

// cockatiel tells failure() the state a call started in: calls still under way when the breaker opened went on
// counting and asking probes, one of which could become the half-open trial call.
it('asks no probe for calls that fail after it opened', async () => {
  const { breaker, pending, call, settle, probes } = harness();
  const calls = Array.from({ length: 5 }, () =>
    call({ path: '/x' } as PimRequest, {} as CallOptions).catch(() => undefined),
  );
  await settle();
  pending[0]!.fail();
  pending[1]!.fail();
  await settle();
  expect(probes()).toBe(1);
  // The probe (the sixth call below) fails too: open.
  pending[5]!.fail();
  await settle();
  expect(breaker.status.breaker).toBe('open');
  for (const late of pending.slice(2, 5)) late.fail();
  await Promise.all(calls);
  await settle();
  expect(probes()).toBe(1);
});
