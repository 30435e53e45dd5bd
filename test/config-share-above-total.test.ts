import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.ts';

const upstream = { PIM_BASE_URL: 'https://tenant.example.com' };

// docs/configuration.md: "A bad value or an unsafe combination stops the process with one line naming the setting";
// each per-credential share is "of those" (the total): "calls one credential may have in flight; the rest stay free for
// others". A share set above its total (the total lowered on a bad day, the share left as it was, or a digit too many)
// is read as the whole total (config.ts shareOf: Math.min(total, set)): the start succeeds, one credential may take
// every slot, and nothing says the value set was not the one used.
describe('a per-credential share set above its total', () => {
  it.each([
    ['PIM_MAX_CONCURRENCY_PER_CREDENTIAL', '12', 'PIM_MAX_CONCURRENCY', '4'],
    ['HTTP_MAX_IN_FLIGHT_PER_CREDENTIAL', '750', 'HTTP_MAX_IN_FLIGHT', '100'],
    ['PIM_MAX_INFLIGHT_BYTES_PER_CREDENTIAL', '25165824', 'PIM_MAX_INFLIGHT_BYTES', '16777216'],
  ])('%s=%s with %s=%s stops the start with one line naming both', (share, shareValue, total, totalValue) => {
    const load = () => loadConfig({ ...upstream, [share]: shareValue, [total]: totalValue });
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(new RegExp(`${share}.*${total}|${total}.*${share}`));
  });

  it('control: a share equal to its total is accepted (docs: "it may be raised to PIM_MAX_CONCURRENCY")', () => {
    const config = loadConfig({ ...upstream, PIM_MAX_CONCURRENCY: '4', PIM_MAX_CONCURRENCY_PER_CREDENTIAL: '4' });
    expect(config.pim.maxConcurrencyPerCredential).toBe(4);
  });
});
