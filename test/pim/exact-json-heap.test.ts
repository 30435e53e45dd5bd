import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { imageEnv } from '../../deploy/image/env.ts';
import { startProcess, type TestProcess } from '../helpers/process.ts';

// exact-json.ts writes each number a double cannot hold as a marker string before the one JSON.parse. With a marker of
// some 50 characters (a per-process nonce), added to the text once per number, a body at the default
// PIM_MAX_BODY_BYTES (8 MiB) of short such numbers (`1e400`, six bytes with its comma) became a 73-million-character
// text of 1.4 million concatenations: under the heap the image and the Deployment set (--max-old-space-size=256) the
// process died of "JavaScript heap out of memory" on one upstream page.
const count = Math.floor(8_388_608 / 6) - 10;
const numbers = Array(count).fill('1e400').join(',');
const bodies = {
  A: Buffer.from(`{"status":200,"meta":{},"data":[${numbers}]}`),
  // A body holding `\u0000` too, which a short marker could be taken for: read with the reviver.
  B: Buffer.from(`{"status":200,"meta":{"x":"\\u0000"},"data":[${numbers}]}`),
};
const upstream = createServer((req, res) => {
  const body = req.url!.includes('/B/') ? bodies.B : bodies.A;
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length }).end(body);
});

let server: TestProcess;
let url: string;
beforeAll(async () => {
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  server = startProcess(process.execPath, ['src/main.ts'], {
    env: {
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      PIM_BASE_URL: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`,
      // The image's heap flags, from the Dockerfile.
      NODE_OPTIONS: imageEnv(readFileSync(new URL('../../Dockerfile', import.meta.url), 'utf8')).NODE_OPTIONS!,
    },
  });
  url = await server.waitFor(/ready at (http:\/\/\S+\/graphql)/);
}, 30_000);
afterAll(async () => {
  server?.kill();
  await new Promise<void>((resolve) => upstream.close(() => resolve()));
});

it.each(['A', 'B'] as const)(
  '%s: a page at the body limit dense with numbers a double cannot hold is answered, the process alive',
  async (catalog) => {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: `{ catalogProducts(catalogId: "${catalog}") }` }),
    }).catch((error: unknown) => error as Error);
    const fatal = server.stderr.find((line) => line.includes('FATAL ERROR'));
    expect(fatal, 'the server process died').toBeUndefined();
    expect(response).toBeInstanceOf(Response);
    expect(await (response as Response).text()).toBe(`{"data":{"catalogProducts":${bodies[catalog].toString()}}}`);
  },
  60_000,
);
