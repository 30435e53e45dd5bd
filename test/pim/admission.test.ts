import type { Dispatcher } from 'undici';
import { describe, expect, it } from 'vitest';
import { createAdmission } from '../../src/pim/admission/admission.ts';
import { createFairQueue } from '../../src/pim/admission/fair-queue.ts';

// One slot in all: a call that kept it would leave the next one waiting until its deadline.
const setup = () => {
  const queue = createFairQueue({ maxConcurrency: 1, maxPerKey: 1 });
  const admit = createAdmission({ queue, keyOf: () => 'caller', requestTimeoutMs: 1_000 });
  return { queue, admit };
};
const opts = () => ({ origin: 'http://127.0.0.1:1', path: '/', method: 'GET', deadline: Date.now() + 1_000 }) as never;

function recordingHandler() {
  const events: string[] = [];
  let failed: (error: Error) => void = () => undefined;
  const error = new Promise<Error>((resolve) => (failed = resolve));
  const handler: Dispatcher.DispatchHandler = {
    onRequestStart: () => events.push('start'),
    onResponseError: (_c, e) => (events.push('error'), failed(e)),
  };
  return { handler, events, error };
}

describe('admission when the dispatch throws', () => {
  it('gives the slot back and tells the handler, instead of an unhandled rejection', async () => {
    const { queue, admit } = setup();
    const boom = new Error('dispatch broke');
    const { handler, events, error } = recordingHandler();
    admit(() => {
      throw boom;
    })(opts(), handler);
    expect(await error).toBe(boom);
    expect(events).toEqual(['start', 'error']);
    const release = await queue.acquire({ partition: 'caller', share: 'caller' }, Date.now() + 100);
    release();
  }, 5_000);

  it('gives the slot back when a handler callback throws inside the dispatch', async () => {
    const { queue, admit } = setup();
    const { handler, events, error } = recordingHandler();
    const throwing: Dispatcher.DispatchHandler = {
      ...handler,
      onResponseStart: () => {
        throw new Error('handler broke');
      },
    };
    admit((_o, h) => {
      h.onRequestStart?.({ abort: () => undefined } as never, {});
      h.onResponseStart?.({} as never, 200, {}, 'OK');
      return true;
    })(opts(), throwing);
    expect((await error).message).toBe('handler broke');
    expect(events).toEqual(['start', 'error']);
    const release = await queue.acquire({ partition: 'caller', share: 'caller' }, Date.now() + 100);
    release();
  }, 5_000);
});

// The probes' partitions joined the turn order at its back: behind many idle credentials waiting, the breaker's
// probe was let out only after all of them, past its deadline in an outage of calls that hang, so it never opened.
describe('the fair queue and the probes', () => {
  it('lets a probe partition out first when a slot frees', async () => {
    const queue = createFairQueue({ maxConcurrency: 1, maxPerKey: 1, first: ['breaker-probe'] });
    const deadline = Date.now() + 5_000;
    const held = await queue.acquire({ partition: 'c-held', share: 'r0' }, deadline);
    const order: string[] = [];
    const wait = (partition: string) =>
      queue.acquire({ partition, share: partition }, deadline).then((release) => (order.push(partition), release()));
    const waiting = [...Array.from({ length: 10 }, (_, i) => wait(`c${i}`)), wait('breaker-probe')];
    held();
    await Promise.all(waiting);
    expect(order[0]).toBe('breaker-probe');
  });
});
