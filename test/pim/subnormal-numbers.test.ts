import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';

// answer.ts promises a number a double cannot hold reaches the client as the PIM wrote it. A double below 2^-1022
// (subnormal) holds fewer than 15 significant digits: 1.2345e-320 parses to 1.2347e-320's double, and the 15-digit
// rule of inexact() let it through as that other number.
const body = '{"status":200,"meta":{},"data":[{"tolerance":1.2345e-320,"drift":-4.94065645841e-324,"n":1}]}';

const servers = closedAfterEach();

it('passes numbers a subnormal double cannot hold through unchanged', async () => {
  const { facade } = await servers.start((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' }).end(body);
  });
  const { text } = await facade.post('{ catalogProducts(catalogId: "A") }');
  expect(text).toBe(`{"data":{"catalogProducts":${body}}}`);
});
