import { expect, it } from 'vitest';
import { useFacade } from '../helpers/facade.ts';
import { captureLogs } from '../helpers/logs.ts';
import { cacheableEcho } from '../helpers/upstream.ts';

const { logger, lines } = captureLogs('info');
const fixture = useFacade({ PIM_MAX_REQUEST_BYTES: '4000' }, cacheableEcho(60), { logger });

// Ten aliases of 400 characters of one search: ~1 KB of answers, a text of ~5 KB, past the 4,000-byte account once
// serialized. A client taking only streams (`Accept: multipart/mixed`) gets the whole result as one part, serialized
// after the response's headers, where sent-bytes.ts sends UPSTREAM_TOO_LARGE in its place.
const query = `{ ${Array.from({ length: 10 }, (_, i) => `a${i}${'_'.repeat(400)}: catalogProducts(catalogId: "C")`).join(' ')} }`;

it('logs the UPSTREAM_TOO_LARGE a multipart client was sent in place of its whole result', async () => {
  const response = await fetch(fixture.facade.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'multipart/mixed', 'x-request-id': 'late-refused' },
    body: JSON.stringify({ query }),
  });
  const text = await response.text();
  expect(text, 'the client was sent the refusal').toContain('UPSTREAM_TOO_LARGE');
  await expect.poll(() => lines.some((line) => line.reqId === 'late-refused')).toBe(true);
  const line = lines.find((one) => one.reqId === 'late-refused')!;
  expect({ errors: line.errors, errorCode: line.errorCode }, JSON.stringify(line)).toEqual({
    errors: 1,
    errorCode: 'UPSTREAM_TOO_LARGE',
  });
});

it('still logs a multipart client’s whole result that fits, once, with its status', async () => {
  const response = await fetch(fixture.facade.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'multipart/mixed', 'x-request-id': 'late-fits' },
    body: JSON.stringify({ query: '{ catalogProducts(catalogId: "FITS") }' }),
  });
  await response.text();
  await expect.poll(() => lines.filter((line) => line.reqId === 'late-fits').length).toBe(1);
  expect(lines.find((one) => one.reqId === 'late-fits')).toMatchObject({ status: 200, msg: 'request completed' });
  expect(lines.find((one) => one.reqId === 'late-fits')!.errors).toBeUndefined();
});
