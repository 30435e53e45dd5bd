import type { DocumentNode } from 'graphql';
import type { YogaServerOptions } from 'graphql-yoga';
import { LRUCache } from 'lru-cache';

type CacheOptions = Exclude<YogaServerOptions<object, object>['parserAndValidationCache'], boolean | undefined>;

// Measured on graphql-js 16: a parsed document keeps every lexer token (a linked list its locations point into)
// and its syntax tree, about 500 bytes a token, and Yoga keeps its validation result beside it: nothing when it
// is valid, as much again when it is not (100 errors with their stacks). Its text, the key, is up to 2 bytes a
// character.
const BYTES_PER_TOKEN = 1_152;
const textBytes = (text: string) => 2 * text.length + 64;

function tokens(document: DocumentNode): number {
  let count = 0;
  for (let token = document.loc?.startToken ?? null; token; token = token.next) count++;
  return count;
}

/** 16 MiB for both caches: some three hundred documents of the usual size, a dozen of the largest the limits let through. */
export const DOCUMENT_CACHE_BYTES = 16 * 2 ** 20;

/**
 * Yoga's caches of parsed documents and of parse errors, bounded in bytes as well as in number, together at most
 * `maxBytes` (three quarters for documents, a quarter for parse errors): the heap budget counts them once. Yoga's
 * own keep 1,024 of each, whatever their size: 1,024 documents of 1,000 short tokens (3 KB each, inside every
 * limit) held half a gigabyte. Validation results are kept per cached document, and go with it.
 */
export function documentCaches(maxBytes = DOCUMENT_CACHE_BYTES): CacheOptions {
  const common = { max: 1_024, ttl: 3_600_000 };
  return {
    documentCache: new LRUCache<string, DocumentNode>({
      ...common,
      maxSize: maxBytes - Math.floor(maxBytes / 4),
      sizeCalculation: (document, text) => textBytes(text) + BYTES_PER_TOKEN * tokens(document),
    }),
    // A parse error keeps the text it failed on, its stack and little else (about 3 KB measured).
    errorCache: new LRUCache<string, object>({
      ...common,
      maxSize: Math.floor(maxBytes / 4),
      sizeCalculation: (_error, text) => textBytes(text) + 4_096,
    }),
  };
}
