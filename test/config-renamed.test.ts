import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, renamedSettings } from '../src/config.ts';
import { startProcess, type TestProcess } from './helpers/process.ts';

const base = { PIM_BASE_URL: 'http://base.example' };
// Each old name with a value in its old unit, and the same value in the new name's unit.
const cases = [
  ['PIM_STALE_IF_ERROR_S', '60', 'PIM_STALE_IF_ERROR_MS', '60000'],
  ['PIM_STALE_WHILE_REVALIDATE_S', '30', 'PIM_STALE_WHILE_REVALIDATE_MS', '30000'],
  ['APQ_TTL_S', '120', 'APQ_TTL_MS', '120000'],
  ['PIM_CACHE_MAX_MB', '2', 'PIM_CACHE_MAX_BYTES', '2097152'],
  ['PIM_STALE_MAX_MB', '3', 'PIM_STALE_MAX_BYTES', '3145728'],
  ['RESPONSE_CACHE_MAX_MB', '5', 'RESPONSE_CACHE_MAX_BYTES', '5242880'],
] as const;
const withoutDeprecations = ({ warnings: _, ...config }: ReturnType<typeof loadConfig>) => config;

describe('renamed settings (durations in ms, sizes in bytes)', () => {
  it('covers every renamed setting', () => {
    expect(cases.map(([from, , to]) => ({ from, to }))).toEqual(expect.arrayContaining(renamedSettings));
    expect(cases).toHaveLength(renamedSettings.length);
  });

  it.each(cases)('%s=%s still works, read as %s=%s, with one warning naming both', (from, value, to, converted) => {
    const byNewName = loadConfig({ ...base, [to]: converted });
    const byOldName = loadConfig({ ...base, [from]: value });
    expect(byNewName.warnings).toEqual([]);
    expect(withoutDeprecations(byOldName)).toEqual(withoutDeprecations(byNewName));
    expect(withoutDeprecations(byNewName)).not.toEqual(withoutDeprecations(loadConfig(base)));
    expect(byOldName.warnings).toHaveLength(1);
    expect(byOldName.warnings[0]).toContain(from);
    expect(byOldName.warnings[0]).toContain(to);
    expect(byOldName.warnings[0]).not.toMatch(new RegExp(`\\b${value}\\b`));
  });

  it('takes the new name when both are set, and says the old one is ignored', () => {
    const config = loadConfig({ ...base, APQ_TTL_S: '5', APQ_TTL_MS: '90000' });
    expect(config.persisted.apq).toMatchObject({ ttlMs: 90_000 });
    expect(config.warnings).toEqual(['APQ_TTL_S is ignored: APQ_TTL_MS is set too and wins; remove APQ_TTL_S']);
  });

  // A second and a half is a whole number of milliseconds: it was refused, as if 1.5 ms had been meant.
  it('reads a decimal in the old unit as the whole number it is in the new one', () => {
    expect(loadConfig({ ...base, PIM_STALE_IF_ERROR_S: '1.5' }).pim.stale).toMatchObject({ staleIfErrorMs: 1_500 });
    expect(loadConfig({ ...base, PIM_CACHE_MAX_MB: '1.5' }).pim.cache).toMatchObject({ maxBytes: 1_572_864 });
    // One that would round to 0 ms is refused: it would turn stale-if-error off.
    expect(() => loadConfig({ ...base, PIM_STALE_IF_ERROR_S: '0.0001' })).toThrow(
      /Invalid PIM_STALE_IF_ERROR_S="0.0001"/,
    );
  });

  it('refuses a bad value under the old name, naming the name that was set', () => {
    expect(() => loadConfig({ PIM_STALE_IF_ERROR_S: 'a day' })).toThrow(ConfigError);
    expect(() => loadConfig({ PIM_STALE_IF_ERROR_S: 'a day' })).toThrow(
      'Invalid PIM_STALE_IF_ERROR_S="a day" (read as PIM_STALE_IF_ERROR_MS="a day"): expected an integer from 0 to',
    );
    expect(() => loadConfig({ PIM_CACHE_MAX_MB: '0' })).toThrow(
      'Invalid PIM_CACHE_MAX_MB="0" (read as PIM_CACHE_MAX_BYTES="0"): expected an integer from 1048576 to',
    );
  });
});

describe('node src/main.ts with an old setting name', () => {
  let server: TestProcess | undefined;
  afterEach(() => server?.kill());

  it('logs the deprecation once at start, then serves', async () => {
    const env = { PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', NODE_ENV: 'test', PIM_STALE_MAX_MB: '16' };
    server = startProcess(process.execPath, ['src/main.ts'], { env });
    await server.waitFor(/ready at (http:\/\/\S+\/graphql)/);
    const warnings = server.lines.filter((line) => line.includes('PIM_STALE_MAX_MB'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('PIM_STALE_MAX_BYTES');
  });
});
