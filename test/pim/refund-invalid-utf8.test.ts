import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { expect, it, vi } from 'vitest';
import { readAnswer } from '../../src/pim/rest/answer.ts';
import { createByteLimits } from '../../src/pim/rest/byte-limits.ts';
import { closedAfterEach } from '../helpers/facade.ts';

const servers = closedAfterEach();

// rest/answer.ts (readAnswer) gives back the bytes of a body it throws away as Buffer.byteLength of the text decoded
// from it, not as the bytes readLimitedText charged. A body that is not valid UTF-8 decodes each bad byte into U+FFFD
// (three bytes): the refund is up to three times the charge, the request's `used` goes below zero, and its later reads
// are counted that much short, toward PIM_MAX_REQUEST_BYTES and the process and credential caps alike.

// A PIM 404 that echoes the id it could not find, as raw bytes (a Latin-1 server, a percent-decoded id).
const invalid = (bytes: number) =>
  Buffer.concat([Buffer.from('{"status":404,"error":"no catalog '), Buffer.alloc(bytes, 0xff), Buffer.from('"}')]);
const page = (label: string) => JSON.stringify({ status: 200, meta: { label }, data: ['x'.repeat(12_000)] });

it('a thrown-away body that is not UTF-8 gives back what it was charged, not more (module)', async () => {
  const upstream = createServer((req, res) => {
    if (req.url === '/bad') res.writeHead(404, { 'content-type': 'application/json' }).end(invalid(9_000));
    else res.writeHead(200, { 'content-type': 'application/json' }).end(page('ok'));
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  try {
    const origin = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    const account = createByteLimits({
      maxRequestBytes: 20_000,
      maxInflightBytes: 1_000_000,
      maxInflightBytesPerCredential: 1_000_000,
    }).open('key');
    const read = async (path: string) => {
      try {
        return (await readAnswer(await request(`${origin}${path}`), 1_000_000, [], account)).size;
      } catch (error) {
        return (error as { code: string }).code;
      }
    };
    expect(await read('/bad')).toBe('NOT_FOUND');
    // 12 KB held: a second page of 12 KB passes the request's 20 KB, whatever 404 came before.
    expect(await read('/ok')).toBeGreaterThan(12_000);
    expect(await read('/ok')).toBe('UPSTREAM_TOO_LARGE');
  } finally {
    await new Promise<void>((resolve) => upstream.close(() => resolve()));
  }
});

it('a 404 that is not UTF-8 does not raise the request read cap (PIM_MAX_REQUEST_BYTES) for its other calls', async () => {
  let open: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const { facade } = await servers.start(
    (req, res) => {
      const url = req.url ?? '';
      if (url.includes('/catalogs/bad/')) {
        res.writeHead(404, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(invalid(9_000));
        return;
      }
      const body = page(url);
      void gate.then(() =>
        res
          .writeHead(200, {
            'content-type': 'application/json',
            'cache-control': 'no-store',
            'content-length': String(Buffer.byteLength(body)),
          })
          .end(body),
      );
    },
    {
      PIM_RETRIES: '0',
      PIM_CACHE: 'false',
      PIM_STALE_IF_ERROR_MS: '0',
      PIM_MAX_REQUEST_BYTES: '20000',
      PIM_MAX_INFLIGHT_BYTES: '1000000',
      PIM_MAX_INFLIGHT_BYTES_PER_CREDENTIAL: '1000000',
    },
  );
  const answer = facade.post(
    '{ bad: catalogProducts(catalogId: "bad") a: catalogProducts(catalogId: "a") b: catalogProducts(catalogId: "b") }',
  );
  // The two pages are answered only once the 404 has been read, judged and counted (telemetry ends after readAnswer).
  await vi.waitFor(
    async () => {
      const metrics = (await facade.get('/metrics')).text;
      expect(metrics).toMatch(/pim_upstream_requests_total\{operation="searchProducts",status="404"\} 1/);
    },
    { timeout: 10_000, interval: 20 },
  );
  open();
  const { body } = await answer;
  const errors = body.errors.filter((e: any) => e.path[0] !== 'bad');
  // The second 12 KB page passes the request's 20 KB of reads: refused at its headers by the read cap. With the 404's
  // over-refund both pages are read whole (24 KB held against 20 KB) and only the send check catches the second.
  expect(errors).toHaveLength(1);
  expect(errors[0].extensions.code).toBe('UPSTREAM_TOO_LARGE');
  expect(errors[0].message).toMatch(/catalog answers of this request exceed 20000 bytes/);
});
