import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { request } from 'undici';
import { expect, it } from 'vitest';
import { parsedWeight, readAnswer } from '../../src/pim/rest/answer.ts';
import { createByteLimits } from '../../src/pim/rest/byte-limits.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const heapUsed = () => (gc(), gc(), process.memoryUsage().heapUsed);

// answer.ts keeps every number a double cannot hold (a Java `long` id) as a JSON.rawJSON object: ~70 bytes of heap
// (the frozen object, its slot, its own string) for 17 characters of text. The store of parsed answers
// (PIM_PARSED_CACHE_BYTES) is bounded by Answer.weight, which counted only the text and `{`/`[`: a page of such ids
// held 3.4 times its count (before parseExact it held less than its text).
const body = (seed: number) =>
  JSON.stringify({ status: 200, meta: { seed }, data: [] }).replace(
    '[]',
    `[${Array.from({ length: 20_000 }, (_, i) => String(1234567890123456000n + BigInt(seed * 100_000 + i))).join(',')}]`,
  );

it('an answer of ids past 2^53 weighs at least the heap its parsed body holds (live and stale)', async () => {
  const upstream = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' }).end(body(Number(req.url!.slice(1))));
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  try {
    const origin = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    const limits = { maxRequestBytes: 1e12, maxInflightBytes: 1e12, maxInflightBytesPerCredential: 1e12 };
    const texts: string[] = [];
    for (let i = 0; i < 10; i++) texts.push(body(i));
    const kept: unknown[] = [];
    let weight = 0;
    const before = heapUsed();
    for (let i = 0; i < 10; i++) {
      const account = createByteLimits(limits).open('key');
      const answer = await readAnswer(await request(`${origin}/${i}`), 1e9, [], account);
      kept.push(answer.body);
      weight += answer.weight;
    }
    const held = heapUsed() - before;
    expect(JSON.stringify(kept[3])).toBe(texts[3]);
    expect(weight).toBeGreaterThanOrEqual(held);
    // The stale path weighs its kept text the same way.
    expect(texts.reduce((sum, text) => sum + parsedWeight(text), 0)).toBeGreaterThanOrEqual(held);
  } finally {
    await new Promise<void>((resolve) => upstream.close(() => resolve()));
  }
});
