import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';

// exact-json.ts marks numbers a double cannot hold as strings starting with a NUL character; a body that holds
// `\u0000` itself (a string that looks like a marker) is read with the reviver: its values come back as they were.
const servers = closedAfterEach();

it.each([
  '["\\u00000","\\u00001",12345678901234567890,"\\u0000"]',
  '{"\\u00000":1e400,"x":"\\u00000","y":[1e-400,"\\u0000#0"]}',
  '["\\\\u00000",12345678901234567890]',
])('passes %s through unchanged', async (data) => {
  const body = `{"status":200,"meta":{},"data":${data}}`;
  const { facade } = await servers.start((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' }).end(body);
  });
  const { text } = await facade.post('{ catalogProducts(catalogId: "A") }');
  expect(text).toBe(`{"data":{"catalogProducts":${body}}}`);
});
