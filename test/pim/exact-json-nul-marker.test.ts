import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';

// exact-json.ts marks numbers a double cannot hold as strings starting with a control character the body does not
// write (NUL first); strings that look like markers come back as they were, and a body writing every candidate is
// read with the reviver.
const servers = closedAfterEach();

const escapes = [...Array(8).keys(), ...Array.from({ length: 10 }, (_, i) => 0x10 + i)].map((code) =>
  JSON.stringify(String.fromCharCode(code)).slice(1, -1),
);
it.each([
  '["\\u00000","\\u00001",12345678901234567890,"\\u0000"]',
  '{"\\u00000":1e400,"x":"\\u00000","y":[1e-400,"\\u0000#0"]}',
  '["\\\\u00000",12345678901234567890]',
  '["\\u00000","\\u00010",12345678901234567890,"\\u0000","\\u0001"]',
  `{"a":"${escapes.join('')}","b":["${escapes.map((e) => `${e}0`).join('","')}"],"c":1e400,"d":"\\u00190"}`,
  `{"a":"${escapes.slice(0, -1).join('')}","b":"\\u00180","c":[1e400,12345678901234567890]}`,
])('passes %s through unchanged', async (data) => {
  const body = `{"status":200,"meta":{},"data":${data}}`;
  const { facade } = await servers.start((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' }).end(body);
  });
  const { text } = await facade.post('{ catalogProducts(catalogId: "A") }');
  expect(text).toBe(`{"data":{"catalogProducts":${body}}}`);
});
