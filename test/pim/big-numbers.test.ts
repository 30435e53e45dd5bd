import { describe, expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';

// README: "each field's value is the service's JSON body unchanged". A Java PIM writes `long` ids and counts past
// 2^53, and decimals with more digits than a double holds: they must reach the client digit for digit.
const numbers =
  '"id":9007199254740993,"total":12345678901234567890,"price":0.12345678901234567891,"tiny":1e-400,"huge":1e400';
const body = `{"status":200,"meta":{"paging":{"page":0}},"data":[{${numbers},"n":42,"s":"x"}]}`;

const servers = closedAfterEach();

describe('numbers in upstream bodies', () => {
  it('passes integers past 2^53, long decimals and out-of-range exponents through unchanged', async () => {
    const { facade } = await servers.start((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(body);
    });
    const { text } = await facade.post('{ catalogProducts(catalogId: "A") }');
    expect(text).toBe(`{"data":{"catalogProducts":${body}}}`);
  });

  it('keeps them unchanged in a stale answer served while the PIM fails', async () => {
    let fail = false;
    const { facade } = await servers.start((_req, res) => {
      if (fail) res.writeHead(503, { 'content-type': 'application/json' }).end('{}');
      else res.writeHead(200, { 'content-type': 'application/json' }).end(body);
    });
    await facade.post('{ catalogProducts(catalogId: "B") }');
    fail = true;
    const { body: answer, text } = await facade.post('{ catalogProducts(catalogId: "B") }');
    expect(answer.extensions?.stale).toBeDefined();
    expect(text).toContain(`"catalogProducts":${body}`);
  });

  it('keeps them unchanged in an answer the cache of parsed answers serves again', async () => {
    const { facade, upstream } = await servers.start((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=60' }).end(body);
    });
    const texts: string[] = [];
    for (let i = 0; i < 3; i++) texts.push((await facade.post(`{ c${i}: catalogProducts(catalogId: "C") }`)).text);
    expect(upstream.requests).toHaveLength(1);
    texts.forEach((text, i) => expect(text).toBe(`{"data":{"c${i}":${body}}}`));
  });

  // Such numbers are written as strings before the body's one parse: where a string is JSON but a number is not (a
  // key), and where a run of digits is no number, the body must stay what it is, no JSON.
  it.each([
    '{"a":1,12345678901234567890:1}',
    '[1.2.3.4.5.6.7.8.9.0.1]',
    '[01234567890123456789]',
    '[1e400',
    '[tru1e400]',
  ])('refuses a body holding %s, which is no JSON', async (data) => {
    const { facade } = await servers.start((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(`{"status":200,"meta":{},"data":${data}}`);
    });
    const { body: answer } = await facade.post('{ catalogProducts(catalogId: "D") }');
    expect(answer.data).toEqual({ catalogProducts: null });
    // The upstream's 2xx judged not JSON, as any such body: not an exception of the reading.
    expect(answer.errors?.[0]?.extensions).toEqual({ code: 'UPSTREAM_ERROR', upstream: { status: 200 } });
  });
});
