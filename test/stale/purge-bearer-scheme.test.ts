import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { echo } from '../helpers/upstream.ts';

// RFC 9110 §11.1: the authentication scheme is case-insensitive, and §11.4 allows one or more spaces after it
// (`credentials = auth-scheme [ 1*SP ( token68 / #auth-param ) ]`). POST /cache/invalidate compared the whole
// header with `Bearer <token>` byte for byte, so a publish hook or HTTP client that writes `bearer` (as several do:
// lower-cased header values, `authorization: bearer …` in YAML) was refused with 401 holding the right token, and
// the purge silently did not happen (curl -f in docs/integration.md's loop fails the hook). A wrong token is still 401.
const { start } = closedAfterEach();
const TOKEN = 'a-long-enough-admin-token';

const purge = (origin: string, authorization: string) =>
  fetch(`${origin}/cache/invalidate`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization },
    body: '{"all":true}',
  }).then((response) => response.status);

it('accepts the admin token whatever the case of the Bearer scheme', async () => {
  const { facade } = await start(echo, { CACHE_ADMIN_TOKEN: TOKEN });
  expect(await purge(facade.origin, `Bearer ${TOKEN}`)).toBe(200);
  expect(await purge(facade.origin, `bearer ${TOKEN}`)).toBe(200);
  expect(await purge(facade.origin, `BEARER ${TOKEN}`)).toBe(200);
  expect(await purge(facade.origin, `Bearer  ${TOKEN}`)).toBe(200);
  // The token itself stays exact.
  expect(await purge(facade.origin, `bearer ${TOKEN.toUpperCase()}`)).toBe(401);
  expect(await purge(facade.origin, `Bearer ${TOKEN}x`)).toBe(401);
  expect(await purge(facade.origin, `Basic ${TOKEN}`)).toBe(401);
  expect(await purge(facade.origin, TOKEN)).toBe(401);
  expect(await purge(facade.origin, `Bearer`)).toBe(401);
});
