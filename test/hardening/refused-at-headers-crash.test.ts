import { afterEach, expect, it } from 'vitest';
import { startProcess, type TestProcess } from '../helpers/process.ts';
import { startUpstream, type Upstream } from '../helpers/upstream.ts';

// rest/guards.ts (readLimitedText): a body refused at its headers (its declared length past a byte cap or
// PIM_MAX_BODY_BYTES) is dropped with `body.destroy()`, before anything listens on undici's body stream. When the
// whole body has already arrived (a small answer comes in the same read as its headers) undici's response is over, so
// no `error` listener of its own is added either: the stream's RequestAbortedError is an uncaught exception, and
// main.ts exits on it. One request of a credential that has read near PIM_MAX_REQUEST_BYTES (or a process near
// PIM_MAX_INFLIGHT_BYTES) asking one more small page takes the whole replica down.

let server: TestProcess | undefined;
let upstream: Upstream | undefined;
afterEach(async () => {
  server?.kill();
  await server?.exited;
  await upstream?.close();
  server = upstream = undefined;
});

it('a small answer refused at its headers by the request byte cap does not crash the process', async () => {
  // Two 12 KB pages, each whole in one write with its Content-Length; the request may read 20 KB.
  upstream = await startUpstream((req, res) => {
    const body = JSON.stringify({ status: 200, meta: { url: req.url }, data: ['x'.repeat(12_000)] });
    res
      .writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) })
      .end(body);
  });
  server = startProcess(process.execPath, ['src/main.ts'], {
    env: {
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      PIM_BASE_URL: upstream.url,
      PIM_CACHE: 'false',
      PIM_RETRIES: '0',
      PIM_MAX_REQUEST_BYTES: '20000',
    },
  });
  const url = await server.waitFor(/ready at (http:\/\/\S+\/graphql)/);
  const answer = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: '{ a: catalogProducts(catalogId: "a") b: catalogProducts(catalogId: "b") }' }),
  })
    .then((response) => response.json())
    .catch((error: unknown) => ({ failed: String(error) }));
  // One page is read, the other refused for the request's cap.
  expect(answer.errors?.map((e: any) => e.extensions.code)).toEqual(['UPSTREAM_TOO_LARGE']);
  // The replica goes on serving: a few requests later it still answers, and never logged an uncaught exception.
  for (let i = 0; i < 3; i++) {
    const health = await fetch(new URL('/health', url)).catch((error: unknown) => ({ status: String(error) }));
    expect(health.status, server.lines.filter((line) => line.includes('Uncaught')).join('\n')).toBe(200);
  }
  expect(server.lines.filter((line) => line.includes('Uncaught exception'))).toEqual([]);
});
