import { parse, validate, type DocumentNode } from 'graphql';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, describe, expect, it } from 'vitest';
import type { LRUCache } from 'lru-cache';
import { documentCaches } from '../../src/plugins/document-cache.ts';
import { schema } from '../../src/schema/index.ts';
import { startProcess, type TestProcess } from '../helpers/process.ts';

// Yoga keeps the parsed documents of 1,024 distinct texts (and the errors of 1,024 that failed to parse) for an
// hour, bounded by count alone. A document of 1,000 short tokens (3 KB, inside every default limit) keeps about
// 500 KB of syntax tree and tokens alive: 1,024 of them are half a gigabyte, and the image's old space is 256 MB.
// Distinct field names: validation stops at 100 unknown ones and compares none with another.
const bigDocument = (i: number) => `{ ${Array.from({ length: 996 }, (_, j) => `f${j}`).join(' ')} n${i} }`;

describe('the cache of parsed documents', () => {
  let server: TestProcess | undefined;
  afterEach(() => server?.kill());

  it('holds a bounded number of bytes: 300 distinct documents of 1,000 tokens fit a small heap', async () => {
    // 112 MB of old space: the server's own 40 MB, the cache's 16 MiB and room to spare. Unbounded, the trees and
    // validation results of the first hundred or so documents (1 MB each) took it all and the process died; with
    // the image's 256 MB it died before 300.
    server = startProcess(process.execPath, ['--max-old-space-size=112', 'src/main.ts'], {
      env: { PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', NODE_ENV: 'test' },
    });
    const url = await server.waitFor(/ready at (http:\/\/\S+\/graphql)/);
    const endpoint = url;
    let next = 0;
    const codes = new Set<string>();
    // Eight at a time, as a client with a few connections would send them.
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let i = next++; i < 300; i = next++) {
          const response = await fetch(endpoint, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ query: bigDocument(i) }),
          });
          codes.add(
            ((await response.json()) as { errors: [{ extensions: { code: string } }] }).errors[0].extensions.code,
          );
        }
      }),
    );
    // Each fails validation (no such fields), after it was parsed and kept.
    expect([...codes]).toEqual(['GRAPHQL_VALIDATION_FAILED']);
    const ok = await fetch(endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    expect(await ok.json()).toEqual({ data: { __typename: 'Query' } });
  }, 60_000);

  // Yoga keeps each cached document's validation result beside it (a WeakMap keyed by the tree): for a document
  // of 1,000 unknown fields, 100 errors with their stacks, as big again as the tree, which the count left out.
  it('counts what its documents hold on the heap, their validation results included', () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const heapUsed = () => (gc(), gc(), process.memoryUsage().heapUsed);
    const { documentCache } = documentCaches(2 ** 40) as { documentCache: LRUCache<string, DocumentNode> };
    const results = new WeakMap<DocumentNode, unknown>();
    const before = heapUsed();
    for (let i = 0; i < 60; i++) {
      const text = bigDocument(i);
      const document = parse(text);
      documentCache.set(text, document);
      results.set(document, validate(schema, document));
    }
    const held = heapUsed() - before;
    expect(documentCache.calculatedSize).toBeGreaterThanOrEqual(held);
  });
});
