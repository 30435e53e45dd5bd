import { LRUCache } from 'lru-cache';
import type { GetResult } from './cache-store.ts';
import { aged, freshnessOf } from '../rest/freshness.ts';
import type { Answer, Freshness } from '../rest/types.ts';

type Headers = Readonly<Record<string, string | string[] | null | undefined>>;

interface Entry {
  staleAt: number;
  vary: GetResult['vary'];
  /** What the stored response's headers said when the HTTP cache served it, at `at` (epoch ms). */
  freshness: Freshness;
  at: number;
  /** The parsed, frozen body, its JSON text's length and its weight; absent until the client hands them over. */
  body?: unknown;
  size?: number;
  weight?: number;
}

/**
 * Parsed bodies of responses the HTTP cache holds fresh, keyed by URL and credential partition,
 * so a repeated call skips the dispatcher, the stream replay and JSON.parse. An entry is only
 * ever opened by a fresh hit of the HTTP cache ({@link AnswerStore.fresh}) and lives until that
 * response's `staleAt`: it never answers longer, or for other Vary values, than the HTTP cache would.
 * Its lifetimes are those the live path reads from the same response's headers, less the time since.
 */
export interface AnswerStore {
  /** Notes a fresh hit of the HTTP cache; `bytes` is its body's size, the entry's weight until its body is parsed. */
  fresh(key: string, result: GetResult, bytes: number): void;
  /** The answer for `key` (its body frozen, its lifetime what is left) if fresh and the Vary headers match. */
  lookup(key: string, headers: Headers, notBefore?: number): Answer | undefined;
  /** Keeps the parsed body of a 2xx answer if {@link fresh} opened an entry for it. */
  remember(key: string, headers: Headers, answer: Answer): void;
  forget(key: string): void;
  /** Drops every entry: some ended their freshness early (an invalidation). */
  clear(): void;
}

export interface AnswerStoreOptions {
  /** Bound on the bodies kept, counted by what they take parsed (Answer.weight). */
  maxBytes: number;
}

/** Creates an in-process {@link AnswerStore}. */
export function createAnswerStore({ maxBytes }: AnswerStoreOptions): AnswerStore {
  const answers = new LRUCache<string, Entry>({ maxSize: maxBytes });
  const usable = (answer: Entry | undefined, headers: Headers): answer is Entry =>
    answer !== undefined && Date.now() <= answer.staleAt && varyMatches(answer.vary, headers);
  return {
    fresh(key, { staleAt, cachedAt, vary, cacheControlDirectives, headers }, bytes) {
      // `no-cache` entries are revalidated on every use; a zero lifetime is never fresh.
      if (cacheControlDirectives?.['no-cache'] || staleAt <= cachedAt || staleAt < Date.now()) return;
      if (bytes <= 0 || held(key, bytes) > maxBytes) return;
      const at = Date.now();
      // The entry's age, rounded up: `aged` takes off the whole seconds since `at` rounded down, so the two together
      // never leave more than the upstream allowed (each rounded to the nearest, a response claimed 9 s with 7.6 left).
      const freshness = freshnessOf(headers, String(Math.ceil((at - cachedAt) / 1000)));
      answers.set(key, { staleAt, vary, freshness, at }, { size: held(key, bytes), ttl: ttlUntil(staleAt) });
    },
    lookup(key, headers, notBefore = 0) {
      const entry = answers.get(key);
      if (!usable(entry, headers) || entry.body === undefined || entry.at <= notBefore) return undefined;
      const { body, size, weight } = entry as Required<Entry>;
      return { body, size, weight, freshness: aged(entry.freshness, Date.now() - entry.at) };
    },
    remember(key, headers, { body, size, weight }) {
      const entry = answers.peek(key);
      if (!usable(entry, headers) || entry.body !== undefined) return;
      // Weighed again by what the parsed body takes, which can be many times its bytes.
      if (held(key, weight) > maxBytes) return void answers.delete(key);
      // A new object: LRUCache keeps the old size when the same value is set again.
      const filled = { ...entry, body: deepFreeze(body), size, weight };
      answers.set(key, filled, { size: held(key, weight), ttl: ttlUntil(entry.staleAt) });
    },
    forget: (key) => void answers.delete(key),
    clear: () => answers.clear(),
  };
}

// What an entry holds besides its body: its key (the URL and credential partition, up to two bytes a character), the
// entry's objects (times, Vary values, freshness) and the LRU's bookkeeping. Counted, or a PIM answering small bodies
// for URLs a caller makes up (an empty page per made-up sorting) held many times the bound in keys alone.
const ENTRY_OVERHEAD = 384;
const held = (key: string, bytes: number) => bytes + 2 * key.length + ENTRY_OVERHEAD;

// At least 1 ms: LRUCache reads a TTL of 0 as "never expires".
const ttlUntil = (staleAt: number) => Math.max(1, staleAt - Date.now() + 1);

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
