import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.ts';
import { closedAfterEach } from './helpers/facade.ts';

// docs/configuration.md: "A bad value ... stops the process with one line naming the setting". A CACHE_ADMIN_TOKEN read
// from a file written with `echo` ends in a line break (or a templated line in trailing spaces): no HTTP header can
// carry that value (a client cannot send a line break; a parser trims the spaces), so POST /cache/invalidate started,
// and refused every purge with 401. PIM_API_KEY, the same kind of secret, is refused at start for exactly this
// (docs/operations.md, "Running the process").
const TOKEN = 'a-long-enough-admin-token';

describe('CACHE_ADMIN_TOKEN that no Authorization header can carry', () => {
  const servers = closedAfterEach();

  it('control: a clean token is accepted by the endpoint', async () => {
    const { facade } = await servers.start((_req, res) => res.end('{}'), { CACHE_ADMIN_TOKEN: TOKEN });
    const answer = await fetch(`${facade.origin}/cache/invalidate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
      body: '{"catalogId":"MASTER"}',
    });
    expect(answer.status).toBe(200);
  });

  it.each([
    ['a trailing line break', `${TOKEN}\n`],
    ['a trailing CRLF', `${TOKEN}\r\n`],
    ['trailing spaces', `${TOKEN}  `],
  ])('with %s: refused at start naming the setting, or the token a client can send is accepted', async (_, value) => {
    let refusal: unknown;
    try {
      loadConfig({ PIM_BASE_URL: 'http://base.example', CACHE_ADMIN_TOKEN: value });
    } catch (error) {
      refusal = error;
    }
    if (refusal !== undefined) {
      expect(refusal).toBeInstanceOf(ConfigError);
      expect(String((refusal as Error).message)).toMatch(/^Invalid CACHE_ADMIN_TOKEN=\*\*\*: expected/);
      return;
    }
    // It started: the endpoint must then be usable with the token as an operator would send it.
    const { facade } = await servers.start((_req, res) => res.end('{}'), { CACHE_ADMIN_TOKEN: value });
    const answer = await fetch(`${facade.origin}/cache/invalidate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${value.trim()}` },
      body: '{"catalogId":"MASTER"}',
    });
    expect(answer.status, 'POST /cache/invalidate with the token a header can carry').not.toBe(401);
  });
});
