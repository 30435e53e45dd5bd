import { monitorEventLoopDelay } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';

// A PIM that writes Java `long` ids (the case parseExact exists for) puts one past 2^53 in nearly every body: then the
// whole body went through JSON.parse's reviver, called for every value, 40-80 times the cost of JSON.parse on a body
// dense with numbers (a 2 MB page held the façade's event loop, every other request and the probes, 1.4-2 s). The walk
// that replaced it, putting the kept numbers back, took every array's keys as strings (Object.keys), five times
// JSON.parse's own cost: a page at the default PIM_MAX_BODY_BYTES (8 MiB) held the loop 5.6 times as long as without.
const servers = closedAfterEach();

const values = Array.from({ length: 4_150_000 }, (_, i) => i % 10).join(',');
const page = (meta: string) => `{"status":200,"meta":${meta},"data":[${values}]}`;

async function stallOf(meta: string) {
  const body = page(meta);
  const { facade } = await servers.start((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' }).end(body);
  });
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  const { text, status } = await facade.post('{ catalogProducts(catalogId: "A") }');
  delay.disable();
  expect(status).toBe(200);
  expect(text === `{"data":{"catalogProducts":${body}}}`, 'the body unchanged').toBe(true);
  return delay.max / 1e6;
}

describe('a page at the default body limit with one number a double cannot hold', () => {
  it('holds the event loop about as long as the same page without it', async () => {
    await stallOf('{"id":7}'); // warm-up
    const plain = await stallOf('{"id":7}');
    const exact = await stallOf('{"id":9007199254740993}');
    const message = `longest event-loop stall: ${Math.round(exact)} ms (${Math.round(plain)} ms without the long id)`;
    expect(exact, message).toBeLessThan(4 * plain);
  }, 120_000);

  // With a string holding `\u0000` too (a C string imported with its end), which the first marker could be taken for,
  // the body was read with the reviver: 15 times as long.
  it('with a string holding \\u0000 too, about as long as without it', async () => {
    await stallOf('{"id":9007199254740993,"note":"x"}'); // warm-up
    const plain = await stallOf('{"id":9007199254740993,"note":"x"}');
    const nul = await stallOf('{"id":9007199254740993,"note":"a\\u0000b"}');
    const message = `longest event-loop stall: ${Math.round(nul)} ms (${Math.round(plain)} ms without the NUL)`;
    expect(nul, message).toBeLessThan(2 * plain);
  }, 120_000);
});
