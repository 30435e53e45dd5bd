import { afterEach, expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';

// 38293b7 made the server's 503 readable by a browser on a CORS_ORIGINS origin. A browser sends every GraphQL POST
// (content-type: application/json) only after a CORS preflight, OPTIONS, whose answer must be a 2xx naming the origin:
// the preflight itself met the HTTP_MAX_IN_FLIGHT bound and got the 503, which no browser lets a page read, so the
// page saw "Failed to fetch" and never sent the POST whose 503 and Retry-After it could have read.
const { start } = closedAfterEach();
let leaving = new AbortController();
afterEach(() => {
  leaving.abort();
  leaving = new AbortController();
});

const origin = 'https://shop.example';

it('a CORS preflight from a listed origin is answered while the server sheds load', async () => {
  const { upstream, facade } = await start(() => undefined, {
    CORS_ORIGINS: origin,
    HTTP_MAX_IN_FLIGHT: '1',
    PIM_CACHE: 'false',
  });
  // Never answered upstream: it holds the one slot.
  void fetch(facade.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin },
    body: JSON.stringify({ query: '{ classificationGroups(classificationId: "A") }' }),
    signal: leaving.signal,
  }).catch(() => {});
  await expect.poll(() => upstream.requests.length).toBe(1);

  const preflight = await facade.request('/graphql', {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
  });
  // What a browser needs to go on to send the POST (and then read its 503): an ok status naming the origin.
  expect(preflight.status).toBeGreaterThanOrEqual(200);
  expect(preflight.status).toBeLessThan(300);
  expect(preflight.headers.get('access-control-allow-origin')).toBe(origin);
  expect(preflight.headers.get('access-control-allow-methods') ?? '').toMatch(/POST/);

  // The POST that follows is still refused, readably.
  const busy = await facade.request('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin },
    body: JSON.stringify({ query: '{ classificationGroups(classificationId: "B") }' }),
  });
  expect(busy.status).toBe(503);
  expect(busy.headers.get('access-control-allow-origin')).toBe(origin);
});
