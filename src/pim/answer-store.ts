import { LRUCache } from 'lru-cache';
import type { GetResult } from './cache-store.ts';

type Headers = Readonly<Record<string, string | string[] | null | undefined>>;

interface Answer {
  staleAt: number;
  vary: GetResult['vary'];
  /** The parsed, frozen body; absent until the client hands it over. */
  body?: unknown;
}

/**
 * Parsed bodies of responses the HTTP cache holds fresh, keyed by URL and credential partition,
 * so a repeated call skips the dispatcher, the stream replay and JSON.parse. An entry is only
 * ever opened by a fresh hit of the HTTP cache ({@link AnswerStore.fresh}) and lives until that
 * response's `staleAt`: it never answers longer, or for other Vary values, than the HTTP cache would.
 */
export interface AnswerStore {
  /** Notes a fresh hit of the HTTP cache; `bytes` is its body's size, the entry's weight. */
  fresh(key: string, result: GetResult, bytes: number): void;
  /** The frozen parsed body for `key` if still fresh and the request's Vary headers match. */
  lookup(key: string, headers: Headers): unknown;
  /** Keeps the parsed body of a 2xx answer if {@link fresh} opened an entry for it. */
  remember(key: string, headers: Headers, body: unknown): void;
  forget(key: string): void;
}

export interface AnswerStoreOptions {
  /** Bound on the bodies kept, counted in bytes of their JSON text. */
  maxBytes: number;
}

/** Creates an in-process {@link AnswerStore}. */
export function createAnswerStore({ maxBytes }: AnswerStoreOptions): AnswerStore {
  const answers = new LRUCache<string, Answer>({ maxSize: maxBytes });
  const usable = (answer: Answer | undefined, headers: Headers): answer is Answer =>
    answer !== undefined && Date.now() <= answer.staleAt && varyMatches(answer.vary, headers);
  return {
    fresh(key, { staleAt, cachedAt, vary, cacheControlDirectives }, bytes) {
      // `no-cache` entries are revalidated on every use; a zero lifetime is never fresh.
      if (cacheControlDirectives?.['no-cache'] || staleAt <= cachedAt || staleAt < Date.now()) return;
      if (bytes <= 0 || bytes > maxBytes) return;
      answers.set(key, { staleAt, vary }, { size: bytes, ttl: staleAt - Date.now() + 1 });
    },
    lookup(key, headers) {
      const answer = answers.get(key);
      return usable(answer, headers) ? answer.body : undefined;
    },
    remember(key, headers, body) {
      const answer = answers.peek(key);
      if (usable(answer, headers) && answer.body === undefined) answer.body = deepFreeze(body);
    },
    forget: (key) => void answers.delete(key),
  };
}

function varyMatches(vary: GetResult['vary'], headers: Headers): boolean {
  for (const name in vary) if (!sameHeader(vary[name], headers[name])) return false;
  return true;
}

// Compares header values the way undici matches Vary: absent equals absent, lists item by item.
function sameHeader(a: string | string[] | null | undefined, b: string | string[] | null | undefined): boolean {
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => v === b[i]);
  return (a ?? null) === (b ?? null);
}

// Every request answered from the store shares one object: freezing makes a mutation throw
// instead of changing another request's answer. Iterative, since upstream nesting can be deep.
function deepFreeze(root: unknown): unknown {
  const pending = [root];
  while (pending.length > 0) {
    const value = pending.pop();
    if (typeof value !== 'object' || value === null || Object.isFrozen(value)) continue;
    Object.freeze(value);
    for (const child of Object.values(value)) pending.push(child);
  }
  return root;
}
