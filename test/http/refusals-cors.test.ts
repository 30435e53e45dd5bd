import { afterEach, describe, expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';

// docs/operations.md: every refusal carries a one-line JSON message and a stable code; CORS headers go to the origins
// in CORS_ORIGINS. A browser app on a listed origin reads a cross-origin answer only when it names that origin: the
// refusals the node:http server sends itself (413, 503, ...) named none, so urql and Apollo Client in a browser saw
// "Failed to fetch" (a network error, no status, no code, no Retry-After) where a same-origin client saw the refusal.
const { start } = closedAfterEach();
let leaving = new AbortController();
afterEach(() => {
  leaving.abort();
  leaving = new AbortController();
});

const origin = 'https://shop.example';
const json = { 'content-type': 'application/json', origin };
const query = JSON.stringify({ query: '{ classificationGroups(classificationId: "A") }' });

/** What a browser lets the page read of a cross-origin answer: nothing unless it names the page's origin. */
function expectReadableBy(response: { headers: Headers }, page: string) {
  expect(response.headers.get('access-control-allow-origin')).toBe(page);
  expect(response.headers.get('vary') ?? '').toMatch(/\bOrigin\b/i);
  expect(response.headers.get('access-control-expose-headers')?.toLowerCase()).toContain('x-request-id');
}

describe('refusals of the node:http server, to a browser on a listed origin', () => {
  it('413 for a body over HTTP_MAX_BODY_BYTES names the origin', async () => {
    const { facade } = await start(() => undefined, { CORS_ORIGINS: origin, HTTP_MAX_BODY_BYTES: '1024' });
    const big = await facade.request('/graphql', { method: 'POST', headers: json, body: 'x'.repeat(2_000) });
    expect(big.status).toBe(413);
    expect(big.body.errors[0].extensions.code).toBe('REQUEST_TOO_LARGE');
    expectReadableBy(big, origin);
  });

  // A browser sends a JSON POST only after a preflight (OPTIONS) whose 2xx names the origin: a preflight refused for load
  // too left the page a network error, the readable 503 never asked for.
  it('503 under load names the origin, and lets it read Retry-After, its preflight answered', async () => {
    const { upstream, facade } = await start(() => undefined, {
      CORS_ORIGINS: origin,
      HTTP_MAX_IN_FLIGHT: '1',
      PIM_CACHE: 'false',
    });
    // Never answered upstream: it holds the one slot.
    void fetch(facade.url, { method: 'POST', headers: json, body: query, signal: leaving.signal }).catch(() => {});
    await expect.poll(() => upstream.requests.length).toBe(1);
    const preflight = await facade.request('/graphql', {
      method: 'OPTIONS',
      headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
    });
    expect(preflight.status).toBeGreaterThanOrEqual(200);
    expect(preflight.status).toBeLessThan(300);
    expect(preflight.headers.get('access-control-allow-origin')).toBe(origin);
    expect(preflight.headers.get('access-control-allow-methods') ?? '').toMatch(/POST/);
    const busy = await facade.request('/graphql', { method: 'POST', headers: json, body: query });
    expect(busy.status).toBe(503);
    expect(busy.body.errors[0].extensions.code).toBe('OVERLOADED');
    expectReadableBy(busy, origin);
    expect(busy.headers.get('access-control-expose-headers')?.toLowerCase()).toContain('retry-after');
  });

  it('an unlisted origin still gets nothing to go on', async () => {
    const { facade } = await start(() => undefined, { CORS_ORIGINS: origin, HTTP_MAX_BODY_BYTES: '1024' });
    const big = await facade.request('/graphql', {
      method: 'POST',
      headers: { ...json, origin: 'https://evil.example' },
      body: 'x'.repeat(2_000),
    });
    expect(big.status).toBe(413);
    expect(big.headers.get('access-control-allow-origin')).toBeNull();
  });
});
