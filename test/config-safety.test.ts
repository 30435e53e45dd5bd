import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.ts';

/** The one line loadConfig refuses `env` with, or undefined when it accepts it. */
function refusal(env: Record<string, string>): string | undefined {
  try {
    loadConfig(env);
    return undefined;
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return error.message;
  }
}

const upstream = { PIM_BASE_URL: 'https://tenant.example.com' };

describe('NODE_ENV', () => {
  it.each(['development', 'production', 'test'])('accepts %s', (value) => {
    expect(refusal({ ...upstream, NODE_ENV: value })).toBeUndefined();
  });

  it.each(['prod', 'Production', 'staging'])('refuses %s instead of quietly staying in development', (value) => {
    expect(refusal({ ...upstream, NODE_ENV: value })).toBe(
      `Invalid NODE_ENV="${value}": expected one of development, production, test`,
    );
  });
});

describe('the bundled demo in production', () => {
  it('is refused when PIM_BASE_URL is unset', () => {
    expect(refusal({ NODE_ENV: 'production' })).toBe(
      'PIM_BASE_URL is required when NODE_ENV=production (set PIM_DEMO=true to serve the bundled demo catalog)',
    );
  });

  it('is served when PIM_DEMO=true says it is wanted', () => {
    expect(loadConfig({ NODE_ENV: 'production', PIM_DEMO: 'true' })).toMatchObject({
      pimBaseUrl: undefined,
      demo: true,
    });
  });

  it('is still the default outside production', () => {
    expect(loadConfig({}).demo).toBe(true);
    expect(loadConfig({ NODE_ENV: 'test' }).demo).toBe(true);
  });

  it('is not served when PIM_BASE_URL is set, unless PIM_DEMO=true asks for it in its place', () => {
    expect(loadConfig(upstream).demo).toBe(false);
    expect(loadConfig({ ...upstream, NODE_ENV: 'production', PIM_DEMO: 'true' }).demo).toBe(true);
  });
});

describe('CORS_ORIGINS', () => {
  it.each(['*', 'https://app.example.com,*', 'https://*.example.com'])(
    'refuses %s, naming the safe alternative',
    (value) => {
      expect(refusal({ CORS_ORIGINS: value })).toBe(
        `Invalid CORS_ORIGINS="${value}": expected the origins that may call, as browsers send them: https://app.example.com,http://localhost:3000 (no path, no trailing slash, * refused)`,
      );
    },
  );

  it('accepts a list of origins', () => {
    expect(loadConfig({ CORS_ORIGINS: 'https://app.example.com, https://admin.example.com' }).corsOrigins).toEqual([
      'https://app.example.com',
      'https://admin.example.com',
    ]);
  });
});

describe('METRICS_PORT', () => {
  it('is unset by default: the metrics are on the main port', () => {
    expect(loadConfig({}).observability).toMatchObject({ metricsPort: undefined, metricsPath: '/metrics' });
  });

  it('is read as a port', () => {
    expect(loadConfig({ METRICS_PORT: '9464' }).observability.metricsPort).toBe(9464);
    expect(refusal({ METRICS_PORT: 'nine' })).toBe('Invalid METRICS_PORT="nine": expected an integer from 0 to 65535');
  });

  it('is refused with METRICS_PATH=off, which serves no metrics at all', () => {
    expect(refusal({ METRICS_PORT: '9464', METRICS_PATH: 'off' })).toBe(
      'METRICS_PORT is set but METRICS_PATH=off serves no metrics: unset one of the two',
    );
  });
});

// Each of these started cleanly, then failed every request (a 500 with a stack, or every keyless call) or crashed.
describe('settings that start and then fail every request', () => {
  it('PIM_FORWARD_HEADERS with a name no header can have', () => {
    expect(refusal({ ...upstream, PIM_FORWARD_HEADERS: 'x-api-key,x api key' })).toBe(
      'Invalid PIM_FORWARD_HEADERS="x-api-key,x api key": expected header names such as x-api-key,authorization',
    );
  });

  it.each([
    ['a trailing newline (a secret file written with echo)', 'key-value\n'],
    ['a control character', 'key\u0000value'],
    ['a character outside Latin-1', 'kéy-välue-€'],
    ['a space at its end, which a header would lose', 'key-value '],
  ])('PIM_API_KEY with %s, without printing the key', (_, key) => {
    expect(refusal({ ...upstream, PIM_API_KEY: key })).toBe(
      'Invalid PIM_API_KEY=***: expected a key a header can carry: printable characters, no line break (a key file ending in a newline?)',
    );
  });

  it('PIM_API_KEY with a space inside, which a header carries', () => {
    expect(refusal({ ...upstream, PIM_API_KEY: 'key with spaces' })).toBeUndefined();
  });

  it.each(['redis://cache:6379/cache', 'redis://cache:6379/1/2', 'redis://cache:6379/-1'])(
    'REDIS_URL %s, whose path is no database number',
    (value) => {
      // `cache:6379/cache` reads as `user:password` with the host left out as well (a password may hold `/`): hidden.
      expect(refusal({ ...upstream, REDIS_URL: value })).toBe(
        'Invalid REDIS_URL="redis://cache:***": expected a redis:// or rediss:// URL whose path, if any, is a database number such as /0',
      );
    },
  );

  it('accepts a database number, and none', () => {
    for (const value of ['redis://cache:6379/3', 'redis://cache:6379/', 'redis://cache:6379']) {
      expect(refusal({ ...upstream, REDIS_URL: value }), value).toBeUndefined();
    }
  });

  it.each([
    'https://user:pass@tenant.example.com',
    'https://tenant.example.com?tenant=a',
    'https://tenant.example.com#x',
  ])('PIM_BASE_URL %s, whose credentials, query or fragment no call would carry', (value) => {
    expect(refusal({ PIM_BASE_URL: value })).toMatch(
      /^Invalid PIM_BASE_URL=".*": expected an absolute http\(s\) URL such as https:\/\/tenant\.example\.com, without user, password, query or fragment \(the key goes in PIM_API_KEY\)$/,
    );
  });

  it('HTTP_HEADERS_TIMEOUT_MS above HTTP_REQUEST_TIMEOUT_MS, each valid alone', () => {
    expect(refusal({ ...upstream, HTTP_REQUEST_TIMEOUT_MS: '5000' })).toBe(
      'HTTP_HEADERS_TIMEOUT_MS (10000) must not be above HTTP_REQUEST_TIMEOUT_MS (5000): the head is part of the request',
    );
  });
});

// docs/configuration.md: "A bad value or an unsafe combination stops the process with one line naming the setting".
// Each of these was valid and left a server that started and reported ready, and then did not do what it said.
describe('settings valid alone that left a server not doing what they say', () => {
  // Every field that calls the PIM costs 100 (plugins/cost.ts): 1 to 99 refused every one of them with a 400.
  it('refuses GRAPHQL_MAX_COST below one PIM field', () => {
    expect(refusal({ ...upstream, GRAPHQL_MAX_COST: '99' })).toMatch(
      /^Invalid GRAPHQL_MAX_COST="99": expected an integer from 100 /,
    );
    expect(refusal({ ...upstream, GRAPHQL_MAX_COST: '100' })).toBeUndefined();
  });

  // The metrics' listener met the main one: `listen EADDRINUSE`, as if another process held the server's own port.
  it('refuses METRICS_PORT equal to PORT, naming both', () => {
    expect(refusal({ ...upstream, PORT: '4000', METRICS_PORT: '4000' })).toMatch(
      /^METRICS_PORT \(4000\) must not be PORT/,
    );
    expect(refusal({ ...upstream, PORT: '0', METRICS_PORT: '0' }), 'a free port each').toBeUndefined();
  });

  // No backoff is longer than 2 s (pim/steps/retry.ts): 2001 to 60000 were all quietly 2000.
  it('refuses PIM_RETRY_BASE_MS above the 2 s every backoff is held to', () => {
    expect(refusal({ ...upstream, PIM_RETRY_BASE_MS: '5000' })).toBe(
      'Invalid PIM_RETRY_BASE_MS="5000": expected an integer from 1 to 2000',
    );
  });

  // The tags are written into it on every cacheable answer and it is deleted from every other: Content-Length broke
  // every cacheable GET's framing (the client saw `fetch failed`), Vary and ETag took the tags in, Set-Cookie made
  // every answer set a cookie, Content-Type left streams untyped.
  it.each([
    'Content-Length',
    'Transfer-Encoding',
    'Content-Type',
    'Vary',
    'ETag',
    'Set-Cookie',
    'x-request-id',
    'Accept',
  ])('refuses SURROGATE_KEY_HEADER=%s, a header HTTP or the server gives a meaning', (name) => {
    expect(refusal({ ...upstream, SURROGATE_KEY_HEADER: name })).toMatch(
      new RegExp(`^Invalid SURROGATE_KEY_HEADER="${name}": expected a header of its own`),
    );
  });

  it.each(['Surrogate-Key', 'Cache-Tag', 'Edge-Cache-Tag', 'xkey'])('accepts SURROGATE_KEY_HEADER=%s', (name) => {
    expect(refusal({ ...upstream, SURROGATE_KEY_HEADER: name })).toBeUndefined();
  });
});

// Forwarded headers are the caller's credentials: `expect` or `keep-alive` made undici refuse every call
// (UND_ERR_NOT_SUPPORTED), `accept`'s value (`application/json`) was blanked out of every answer as a secret, and
// `x-request-id` (or, traced, `traceparent`), new on every request, made each request a credential of its own: no HTTP
// cache hit ever, no key ever seen accepted at the door.
describe('PIM_FORWARD_HEADERS', () => {
  it.each([
    'expect',
    'keep-alive',
    'accept',
    'host',
    'content-type',
    'transfer-encoding',
    'x-request-id',
    'traceparent',
  ])('refuses %s, which a call sets or frames itself', (name) => {
    expect(refusal({ ...upstream, PIM_FORWARD_HEADERS: `x-api-key,${name}` })).toMatch(
      /^Invalid PIM_FORWARD_HEADERS=".*": expected credential headers such as x-api-key,authorization/,
    );
  });

  it.each(['x-api-key,authorization', 'x-tenant-key', 'cookie'])('accepts %s', (names) => {
    expect(refusal({ ...upstream, PIM_FORWARD_HEADERS: names })).toBeUndefined();
  });
});
