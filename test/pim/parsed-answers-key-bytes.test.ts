import { expect, it } from 'vitest';
import { createAnswerStore } from '../../src/pim/cache/answer-store.ts';
import type { GetResult } from '../../src/pim/cache/cache-store.ts';
import { parsedWeight, sentSize } from '../../src/pim/rest/answer.ts';
import { buildRequest } from '../../src/pim/rest/endpoints.ts';

// The store of parsed answers (PIM_CACHE_MAX_BYTES) weighed each entry by its body alone: neither its key (the whole
// URL and credential partition, up to some 1.5 KB with ids a caller chooses) nor the entry's own objects counted, and
// it has no count bound. A PIM answering small bodies (an empty page, `{"data":[]}`) for made-up sortings or pages
// let one caller keep ten times the bound in keys alone.
it('the parsed answers kept, keys included, stay within their byte bound', () => {
  const maxBytes = 2 ** 20;
  const store = createAnswerStore({ maxBytes });
  const limits = { maxPageSize: 200, maxIdLength: 128 };
  const text = '{"status":200,"data":[]}';
  const now = Date.now();
  const keys: string[] = [];
  for (let page = 0; page < 4_000; page++) {
    // What a caller may choose, within every argument check: a 128-character id of `€` (9 characters encoded).
    const { path } = buildRequest(
      'searchProducts',
      { catalogId: 'MACHINERY', classificationGroupId: '€'.repeat(128), sorting: `-${'a'.repeat(200)}`, page },
      limits,
    );
    const key = `https://pim.example.com${path}#AAAAAAAAAAAAAAAAAAAAAA`;
    keys.push(key);
    const stored = {
      statusCode: 200,
      statusMessage: 'OK',
      headers: { 'cache-control': 'max-age=600' },
      body: Buffer.from(text),
      cachedAt: now,
      staleAt: now + 600_000,
      deleteAt: now + 600_000,
      cacheControlDirectives: { 'max-age': 600 },
    } as unknown as GetResult;
    store.fresh(key, stored, Buffer.byteLength(text));
    store.remember(
      key,
      {},
      {
        body: JSON.parse(text),
        size: sentSize(text),
        weight: parsedWeight(text),
        freshness: { maxAgeS: 600, sharedMaxAgeS: 600, shared: true },
      },
    );
  }
  const held = keys.filter((key) => store.lookup(key, {}) !== undefined);
  // Each entry held keeps at least its key's characters (one byte each: the key is ASCII).
  const keyBytes = held.reduce((sum, key) => sum + key.length, 0);
  expect(keys[0]!.length).toBeGreaterThan(1_400);
  expect(keyBytes).toBeLessThanOrEqual(maxBytes);
});
