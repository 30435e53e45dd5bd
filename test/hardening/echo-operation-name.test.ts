import { describe, expect, it } from 'vitest';
import { DOCUMENT_CACHE_BYTES } from '../../src/plugins/document-cache.ts';
import { useFacade } from '../helpers/facade.ts';
import { heapInUse } from '../helpers/heap.ts';

// graphql-js names the operation in every "never used" / "not defined" refusal. The name is one token of any length:
// a 60 KB name and 95 unused variables (about 400 tokens, under GRAPHQL_MAX_TOKENS and HTTP_MAX_BODY_BYTES) make
// 95 errors that each copy the whole name back.
// Apollo Client's default Accept: request errors are 400s under the GraphQL-over-HTTP spec.
const accept = { accept: 'application/graphql-response+json, application/json;q=0.9' };
const NAME_LENGTH = 60_000;
const hostile = (i: number) =>
  `query ${'N'.repeat(NAME_LENGTH)}${i}(${Array.from({ length: 95 }, (_, j) => `$v${j}: Int`).join(' ')}) { __typename }`;

describe('a refusal that quotes the operation name', () => {
  const servers = useFacade({ NODE_ENV: 'production' });

  it('is bounded: the answer is not many times the request, and nothing reaches the PIM', async () => {
    const body = JSON.stringify({ query: hostile(0) });
    const answer = await servers.facade.postBody({ query: hostile(0) }, accept);
    expect(answer.status).toBe(400);
    expect(answer.body.errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(answer.body.errors).toHaveLength(95);
    expect(answer.body.errors[0].message).toMatch(/^Variable "\$v0" is never used in operation "N{100}…"\.$/);
    expect(servers.upstream.requests).toHaveLength(0);
    // Clipped names (or one refusal) keep the answer near the request's size; as is, it is ~94 times it (5.7 MB).
    expect(answer.text.length).toBeLessThan(4 * body.length);
  });

  it('keeps the cache of documents within its bytes: refused documents do not pin their echoed errors', async () => {
    // Warm up (compiled code, pools), then send 12 distinct such documents: each is cached with its validation result.
    await servers.facade.postBody({ query: hostile(1_000) }, accept);
    const before = await heapInUse();
    for (let i = 0; i < 12; i++) {
      const answer = await servers.facade.postBody({ query: hostile(i + 1) }, accept);
      expect(answer.status).toBe(400);
    }
    const held = (await heapInUse()) - before;
    // The caches promise DOCUMENT_CACHE_BYTES (16 MiB) for documents and their validation results together.
    expect(held).toBeLessThan(DOCUMENT_CACHE_BYTES * 1.5);
  });

  it('a long name in a valid operation is served', async () => {
    const answer = await servers.facade.postBody({ query: `query ${'N'.repeat(60_000)} { __typename }` }, accept);
    expect(answer.status).toBe(200);
    expect(answer.body.data).toEqual({ __typename: 'Query' });
  });

  // Clipped by UTF-16 units, a quote could end on the first half of an emoji: a lone surrogate, which a client
  // re-encoding the text to UTF-8 turns into U+FFFD, or throws on.
  it('clips a quoted value to well-formed text', async () => {
    const value = `${'a'.repeat(99)}😀${'b'.repeat(150)}`;
    const query = `{ p: catalogProducts(catalogId: {a: "${value}"}) }`;
    const answer = await servers.facade.postBody({ query }, accept);
    expect(answer.status).toBe(400);
    const message: string = answer.body.errors[0].message;
    expect(message).toContain('…');
    expect(message.isWellFormed()).toBe(true);
  });
});
