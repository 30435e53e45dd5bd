import { LRUCache } from 'lru-cache';
import type { GetResult } from './cache-store.ts';
import type { Answer } from './types.ts';

type Headers = Readonly<Record<string, string | string[] | null | undefined>>;

interface Entry {
  staleAt: number;
  vary: GetResult['vary'];
  /** The parsed, frozen body; absent until the client hands it over. */
  body?: unknown;
  /** Whether a shared cache may keep the answer, as its first caller was told. */
  shared?: boolean;
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
  /** The answer for `key` (its body frozen, its lifetime what is left) if fresh and the Vary headers match. */
  lookup(key: string, headers: Headers): Answer | undefined;
  /** Keeps the parsed body of a 2xx answer if {@link fresh} opened an entry for it. */
  remember(key: string, headers: Headers, answer: Answer): void;
  forget(key: string): void;
}

export interface AnswerStoreOptions {
  /** Bound on the bodies kept, counted in bytes of their JSON text. */
  maxBytes: number;
}

/** Creates an in-process {@link AnswerStore}. */
export function createAnswerStore({ maxBytes }: AnswerStoreOptions): AnswerStore {
  const answers = new LRUCache<string, Entry>({ maxSize: maxBytes });
  const usable = (answer: Entry | undefined, headers: Headers): answer is Entry =>
    answer !== undefined && Date.now() <= answer.staleAt && varyMatches(answer.vary, headers);
  return {
    fresh(key, { staleAt, cachedAt, vary, cacheControlDirectives }, bytes) {
      // `no-cache` entries are revalidated on every use; a zero lifetime is never fresh.
      if (cacheControlDirectives?.['no-cache'] || staleAt <= cachedAt || staleAt < Date.now()) return;
      if (bytes <= 0 || bytes > maxBytes) return;
      answers.set(key, { staleAt, vary }, { size: bytes, ttl: staleAt - Date.now() + 1 });
    },
    lookup(key, headers) {
      const entry = answers.get(key);
      if (!usable(entry, headers) || entry.body === undefined) return undefined;
      const maxAgeS = Math.max(0, Math.floor((entry.staleAt - Date.now()) / 1000));
      return { body: entry.body, freshness: { maxAgeS, shared: entry.shared === true } };
    },
    remember(key, headers, { body, freshness }) {
      const entry = answers.peek(key);
      if (!usable(entry, headers) || entry.body !== undefined) return;
      entry.body = deepFreeze(body);
      entry.shared = freshness.shared;
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
