import { monitorEventLoopDelay } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';

// A PIM that writes Java `long` ids (the case parseExact exists for) puts one past 2^53 in nearly every body: then the
// whole body went through JSON.parse's reviver, called for every value, 40-80 times the cost of JSON.parse on a body
// dense with numbers. A 4 MB page held the façade's event loop (every other request, the probes) for seconds.
const servers = closedAfterEach();

const page = (longId: boolean) => {
  const values = Array.from({ length: 1_000_000 }, (_, i) => i % 10).join(',');
  return `{"status":200,"meta":{"id":${longId ? '9007199254740993' : '7'}},"data":[${values}]}`;
};

async function stallOf(longId: boolean) {
  const body = page(longId);
  const { facade } = await servers.start((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' }).end(body);
  });
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  const { text, status } = await facade.post('{ catalogProducts(catalogId: "A") }');
  delay.disable();
  expect(status).toBe(200);
  expect(text).toBe(`{"data":{"catalogProducts":${body}}}`);
  return delay.max / 1e6;
}

describe('a body with one number a double cannot hold', () => {
  it('is read about as fast as one without: the event loop is not held for seconds', async () => {
    const plain = await stallOf(false);
    const exact = await stallOf(true);
    expect(
      exact,
      `longest event-loop stall: ${Math.round(exact)} ms (${Math.round(plain)} ms without the long id)`,
    ).toBeLessThan(Math.max(600, 5 * plain));
  }, 60_000);
});
