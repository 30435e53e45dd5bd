import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.ts';
import { runProcess } from './helpers/process.ts';

// A generated Redis password may hold a `%` that is no percent-escape: the URL parser takes it as it is, and
// src/redis.ts's decodeURIComponent then throws while the app is built.
const url = 'redis://:ab%zz-s3cret@127.0.0.1:1';

describe('REDIS_URL whose password is not percent-encoded', () => {
  it('is refused by loadConfig with one line naming the setting, the password not shown', () => {
    expect(() => loadConfig({ REDIS_URL: url })).toThrow(ConfigError);
    expect(() => loadConfig({ REDIS_URL: url })).toThrow(
      /^Invalid REDIS_URL="redis:\/\/:\*\*\*@127\.0\.0\.1:1": expected /,
    );
  });

  it('stops node src/main.ts with exit code 1 and one line on stderr, not a stack', async () => {
    const { code, stderr } = await runProcess(process.execPath, ['src/main.ts'], {
      env: { PORT: '0', HOST: '127.0.0.1', PIM_BASE_URL: '', REDIS_URL: url },
    });
    expect(code).toBe(1);
    expect(stderr).toHaveLength(1);
    expect(stderr[0]).toMatch(/^Invalid REDIS_URL=/);
    expect(stderr.join('\n')).not.toContain('s3cret');
  });
});
