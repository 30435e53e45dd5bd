import type { DocumentNode, GraphQLSchema, ValidationRule } from 'graphql';
import type { Plugin, YogaServerOptions } from 'graphql-yoga';
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

/** A cached document's weight: its tokens, and its text once, plus once more for each validation error it got. */
const documentBytes = (document: DocumentNode, text: string, errors = 0) =>
  textBytes(text) * (errors + 1) + BYTES_PER_TOKEN * tokens(document);

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
    // Validation results are kept by useValidationCache (below).
    validationCache: false,
    documentCache: new LRUCache<string, DocumentNode>({
      ...common,
      maxSize: maxBytes - Math.floor(maxBytes / 4),
      sizeCalculation: (document, text) => documentBytes(document, text),
    }),
    // A parse error keeps the text it failed on, its stack and little else (about 3 KB measured).
    errorCache: new LRUCache<string, object>({
      ...common,
      maxSize: Math.floor(maxBytes / 4),
      sizeCalculation: (_error, text) => textBytes(text) + 4_096,
    }),
  };
}

// Rule lists kept apart: the plugins add the same rules to every request, but one could add one conditionally.
const MAX_RULE_LISTS = 8;

/**
 * Yoga's cache of validation results, without building a key per request: Yoga's joined the names of every rule (some
 * forty) into a string and looked it up in an LRU on every request. Here the rules are compared one by one with the
 * lists seen before (by name where not the same function, as Yoga keyed them), and a result is kept per schema and
 * document, going with the document as Yoga's does. Last of the plugins, where Yoga's ran: every rule the others add
 * is in the list, and its result is stored after their hooks.
 */
export function useValidationCache(documents?: CacheOptions['documentCache']): Plugin {
  const lists: Array<{
    rules: readonly ValidationRule[];
    results: WeakMap<GraphQLSchema, WeakMap<DocumentNode, unknown>>;
  }> = [];
  const resultsOf = (rules: readonly ValidationRule[]) => {
    let list = lists.find((known) => sameRules(known.rules, rules));
    if (!list) {
      if (lists.length >= MAX_RULE_LISTS) lists.shift();
      lists.push((list = { rules: [...rules], results: new WeakMap() }));
    }
    return list.results;
  };
  return {
    onValidate({ params: { schema, documentAST, rules }, setResult }) {
      if (schema == null) return;
      const bySchema = resultsOf(rules ?? []);
      let byDocument = bySchema.get(schema);
      if (!byDocument) bySchema.set(schema, (byDocument = new WeakMap()));
      const cached = byDocument.get(documentAST);
      if (cached) return void setResult(cached as Parameters<typeof setResult>[0]);
      return ({ result }) => {
        if (result == null) return;
        byDocument.set(documentAST, result);
        if (result.length > 0) weighRefused(documents, documentAST, result.length);
      };
    },
  };
}

/**
 * A refused document keeps graphql-js's own errors reachable while it is cached, which quote what it names: the
 * operation's name in each unused variable's (95 of them quoting a 60 KB name held 6 MB). Counted at the document's
 * text again for each error, a refused document holds its share of the bound, or, heavier than it, is not kept.
 */
function weighRefused(documents: CacheOptions['documentCache'], document: DocumentNode, errors: number) {
  const text = document.loc?.source.body;
  if (!(documents instanceof LRUCache) || text === undefined || documents.peek(text) !== document) return;
  // Set anew: LRUCache keeps the size an entry had when the same value is set again.
  documents.delete(text);
  documents.set(text, document, { size: documentBytes(document, text, errors) });
}

function sameRules(a: readonly ValidationRule[], b: readonly ValidationRule[]): boolean {
  if (a.length !== b.length) return false;
  // By name where not the same function, as Yoga keyed them: some plugins (Armor's) make their rules per request.
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i] && a[i]!.name !== b[i]!.name) return false;
  return true;
}
