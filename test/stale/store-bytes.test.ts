import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { createLastKnownGood } from '../../src/pim/cache/last-known-good.ts';

// A full collection on demand, for a heap measure that counts only what is still held.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const heapUsed = () => (gc(), gc(), process.memoryUsage().heapUsed);

// PIM_STALE_MAX_BYTES is the store's share of the heap budget (docs/deploying.md): what it counts must be at
// least what it holds. It counted 64 bytes an entry beyond its text and key, which took some 300 more, so
// small answers held 3.3 times their count; and a text with one character past Latin-1 (a €) takes 2 bytes each.
describe('the stale-answer store counts', () => {
  // A credential holds one copy or many: each credential's share of the store has bookkeeping of its own.
  const oneCredential = (i: number) => `partition-of-a-caller /pxm/pimapi/v1/catalogs/C${i}/products/search`;
  const ownCredential = (i: number) => `${String(i).padStart(22, 'p')} /pxm/pimapi/v1/catalogs/C${i}/products/search`;
  it.each([
    ['small answers', 40, 'x', oneCredential],
    ['answers with a € in them', 2_000, '€', oneCredential],
    ['small answers, each of a credential of its own', 40, 'x', ownCredential],
  ])('at least the heap its entries hold: %s', (_name, length, filler, keyOf) => {
    const store = createLastKnownGood({
      maxBytes: 2 ** 40,
      redisMaxBytes: 0,
      shared: undefined,
      onError: () => undefined,
    });
    const count = 10_000;
    const before = heapUsed();
    const now = Date.now();
    for (let i = 0; i < count; i++) {
      // Decoded from bytes, as answers arrive: flat strings, not the ropes a concatenation makes.
      const text = Buffer.from(`{"data":"${filler.repeat(length)}","n":${i}}`).toString();
      const key = Buffer.from(keyOf(i)).toString();
      store.keep(key, {
        text,
        storedAt: now,
        freshUntil: now + 60_000,
        revalidateUntil: now + 60_000,
        errorUntil: now + 3_600_000,
      });
    }
    const held = heapUsed() - before;
    expect(store.bytes()).toBeGreaterThanOrEqual(held);
    // And not wildly more, which would keep far fewer answers than the budget allows.
    expect(store.bytes()).toBeLessThan(3 * held);
  });
});
