import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { expect, it } from 'vitest';
import { createRevocations } from '../../src/pim/cache/revocations.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const heapUsed = () => (gc(), gc(), process.memoryUsage().heapUsed);
const remembering = () =>
  createRevocations({
    shared: undefined,
    recordMs: 86_400_000,
    redisMaxBytes: 0,
    clockMarginMs: 5_000,
    onError: () => {},
  });

// The PIM's 404s are remembered per URL and credential (its store key): ten thousand names in each list, as the 401s
// of credentials are. A partition's name is some 30 characters; a URL's may take thousands (MAX_ID_LENGTH up to
// 4,096, encoded), and a flood of made-up ids' 404s held some 40 MB. The bytes of the names bound each list too.
it('remembers verdicts of long URLs in a few MiB, and still ten thousand short names', () => {
  const verdicts = remembering();
  const before = heapUsed();
  const name = (i: number) =>
    Buffer.from(`partition /pxm/pimapi/v1/classifications/K/groups/${'x'.repeat(4_000)}${i}`).toString();
  for (let i = 0; i < 10_000; i++) verdicts.refused(name(i), false);
  const held = heapUsed() - before;
  // Held to here: the latest is remembered.
  expect(verdicts.since(name(9_999))).toBeGreaterThan(0);
  expect(held).toBeLessThan(6 * 1024 * 1024);

  const revocations = remembering();
  const names = Array.from({ length: 10_000 }, (_, i) => `partition-of-a-caller-${i}`);
  for (const name of names) revocations.refused(name, false);
  expect(revocations.since(names[0]!)).toBeGreaterThan(0);
});
