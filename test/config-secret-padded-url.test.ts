import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.ts';

/** The one line loadConfig refuses `env` with. */
function refusal(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.message;
    throw error;
  }
  throw new Error('accepted');
}

// config.ts: "A URL setting may carry a secret (a REDIS_URL password, ...): the error line must not print it", and
// test/config-secret-url.test.ts holds it for `redis://default:<password>` (the host left out). The same value with a
// space, tab or line break before it (a templated line), or in the literal quotes an env-file passes on, is refused
// just the same: loadConfig only drops values that are all whitespace, z.url() trims, but withoutSecrets' rules are
// anchored at `^scheme://` and print the password whole.
describe('a refused URL setting with whitespace or quotes around it', () => {
  it.each([
    ['REDIS_URL', ' redis://default:s3cretPassw0rd'],
    ['REDIS_URL', '\nredis://default:s3cretPassw0rd'],
    ['REDIS_URL', '"redis://default:s3cretPassw0rd"'],
    ['REDIS_URL', ' redis://default:s3cret/Passw0rd'],
    ['PIM_BASE_URL', '\thttps://svc-user:s3cretPassw0rd/pxm'],
    ['OTEL_EXPORTER_OTLP_ENDPOINT', ' https://tenant:s3cretPassw0rd'],
  ])('%s=%j is refused without printing the password', (name, value) => {
    const line = refusal({ [name]: value });
    expect(line).toMatch(new RegExp(`^Invalid ${name}=`));
    expect(line).not.toMatch(/s3cret|Passw0rd/);
  });

  // Control: the same values without the padding are hidden today.
  it.each([
    ['REDIS_URL', 'redis://default:s3cretPassw0rd'],
    ['PIM_BASE_URL', 'https://svc-user:s3cretPassw0rd/pxm'],
  ])('control: %s=%j is refused without printing the password', (name, value) => {
    expect(refusal({ [name]: value })).not.toMatch(/s3cret|Passw0rd/);
  });
});
