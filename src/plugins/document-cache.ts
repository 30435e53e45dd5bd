import type { DocumentNode } from 'graphql';
import type { YogaServerOptions } from 'graphql-yoga';
import { LRUCache } from 'lru-cache';

type CacheOptions = Exclude<YogaServerOptions<object, object>['parserAndValidationCache'], boolean | undefined>;

// Measured on graphql-js 16: a parsed document keeps every lexer token (a linked list its locations point into)
// and its syntax tree, about 500 bytes a token; its text is the cache key, up to two bytes a character.
const BYTES_PER_TOKEN = 512;
const textBytes = (text: string) => 2 * text.length + 64;

function tokens(document: DocumentNode): number {
  let count = 0;
  for (let token = document.loc?.startToken ?? null; token; token = token.next) count++;
  return count;
}

/** 16 MiB: some thousand documents of the usual size, some thirty of the largest the limits let through. */
export const DOCUMENT_CACHE_BYTES = 16 * 2 ** 20;

/**
 * Yoga's caches of parsed documents and of parse errors, bounded in bytes as well as in number. Yoga's own
 * keep 1,024 of each, whatever their size: 1,024 documents of 1,000 short tokens (3 KB each, inside every
 * limit) held half a gigabyte. Validation results are kept per cached document, and go with it.
 */
export function documentCaches(maxBytes = DOCUMENT_CACHE_BYTES): CacheOptions {
  const common = { max: 1_024, ttl: 3_600_000, maxSize: maxBytes };
  return {
    documentCache: new LRUCache<string, DocumentNode>({
      ...common,
      sizeCalculation: (document, text) => textBytes(text) + BYTES_PER_TOKEN * tokens(document),
    }),
    // A parse error keeps the text it failed on, and little else.
    errorCache: new LRUCache<string, object>({ ...common, sizeCalculation: (_error, text) => textBytes(text) + 1_024 }),
  };
}
