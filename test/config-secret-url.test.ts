import { describe, expect, it } from 'vitest';
import { runProcess } from './helpers/process.ts';

// config.ts: "A URL setting may carry a secret (a REDIS_URL password, ...): the error line must not print it."
// A URL whose scheme was left out, or written with one slash, is refused, and its line printed the password.
describe('a refused URL setting whose scheme, authority or query is unusual', () => {
  it.each([
    ['REDIS_URL', 'default:s3cretPassw0rd@redis:6379'],
    ['REDIS_URL', 'rediss:/default:s3cretPassw0rd@redis:6379'],
    ['PIM_BASE_URL', 'svc-user:s3cretPassw0rd@tenant.example.com'],
    // `scheme://` with an empty authority (a slash too many), which the rules for a well-formed one cannot read.
    ['REDIS_URL', 'redis:///default:s3cretPassw0rd@redis:6379'],
    ['PIM_BASE_URL', 'https:///svc-user:s3cretPassw0rd@tenant.example.com'],
    // A user name that holds an `@` itself (an e-mail address), with a password after it.
    ['REDIS_URL', 'redis://ops@corp.example:s3cretPassw0rd@redis:99999'],
    ['PIM_BASE_URL', 'https://svc@corp.example:s3cretPassw0rd@tenant.example.com:99999/pxm'],
    // A query past a line break (URL parsers drop the break), where the query's rule stopped at the first line's end.
    ['REDIS_URL', 'redis://redis:99999/0?db=0\npassword=s3cretPassw0rd'],
    // The host left out: the password stands where the port goes (`user:password`), and is refused as a port.
    ['REDIS_URL', 'redis://default:s3cretPassw0rd'],
    ['PIM_BASE_URL', 'https://svc-user:s3cretPassw0rd/pxm'],
    // …and a password that holds `/` (base64), which the rule for that case stopped at.
    ['REDIS_URL', 'redis://default:s3cret/Passw0rd'],
    ['PIM_BASE_URL', 'https://svc-user:s3cret/Passw0rd'],
    ['REDIS_URL', 'redis://default:s3cret/Passw0rd/0'],
    // …or one that starts with digits before its first `/`, which read as a port.
    ['REDIS_URL', 'redis://default:42/s3cretPassw0rd'],
    ['PIM_BASE_URL', 'https://svc-user:7/s3cretPassw0rd?x'],
    ['REDIS_URL', 'redis://default:123456789/s3cretPassw0rd'],
  ])('%s=%s stops the start without printing the password', async (name, value) => {
    const { code, stderr } = await runProcess(process.execPath, ['src/main.ts'], {
      env: { PORT: '0', HOST: '127.0.0.1', NODE_ENV: 'test', PIM_BASE_URL: '', [name]: value },
    });
    expect(code).toBe(1);
    expect(stderr.join('\n')).toMatch(new RegExp(`^Invalid ${name}=`));
    expect(stderr.join('\n')).not.toMatch(/s3cret|Passw0rd/);
  });
});
