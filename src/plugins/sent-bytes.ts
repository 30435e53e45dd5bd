import { isAsyncIterable, mapAsyncIterator } from 'graphql-yoga';
import type { ByteAccount } from '../pim/rest/byte-limits.ts';
import { PimError } from '../pim/rest/errors.ts';
import { sentInstead } from './operation.ts';

/**
 * A result (one, a batch, or a stream of parts) whose serialization counts its UTF-8 bytes toward the request's
 * account: what the client chose to have repeated (alias names, @defer/@stream labels, once per entity
 * representation) included. Past a cap the client gets UPSTREAM_TOO_LARGE in place of the text (`onRefused` is told),
 * and a stream ends there.
 */
export function countedWhenSent<R>(result: R, account: ByteAccount, onRefused: () => void): R {
  if (isAsyncIterable(result)) {
    // A stream ends at its refused part: the parts after it may deliver into data the client never got.
    let refused = false;
    const parts = mapAsyncIterator(result, (part) => counted(part, account, () => ((refused = true), onRefused())));
    return until(parts, () => refused) as R;
  }
  for (const one of Array.isArray(result) ? result : [result]) counted(one, account, onRefused);
  return result;
}

/** A result or streamed part as Yoga serializes it: with its own `stringify` when a plugin gave it one. */
type Serialized = { data?: unknown; hasNext?: boolean; stringify?: (result: unknown) => string };

/**
 * Makes the serialization of `result` (a whole result, or one part of a stream) count its UTF-8 bytes toward the
 * request's account; past a cap the client gets an UPSTREAM_TOO_LARGE error in place of the text.
 */
function counted<R>(result: R, account: ByteAccount, onRefused: () => void): R {
  const serialized = result as Serialized;
  const stringify = serialized.stringify ?? JSON.stringify;
  serialized.stringify = (sanitized) => {
    const text = stringify(sanitized);
    try {
      account.wrote(Buffer.byteLength(text));
      return text;
    } catch (error) {
      if (!(error instanceof PimError)) throw error;
      onRefused();
      const errors = [{ message: error.message, extensions: { code: error.code } }];
      // What the metrics count: the errors sent, not those of the result refused.
      sentInstead(serialized, errors);
      const data = 'data' in serialized ? { data: null } : {};
      // The last part of its stream (see `until`).
      const hasNext = serialized.hasNext === undefined ? {} : { hasNext: false };
      return JSON.stringify({ ...data, errors, ...hasNext });
    }
  };
  return result;
}

/** `parts` until `ended` says so: then done, `parts` returned (its deferred work stopped, its onEnd hooks run). */
function until<T>(parts: AsyncIterableIterator<T>, ended: () => boolean): AsyncIterableIterator<T> {
  let returned = false;
  const finish = async (value?: unknown): Promise<IteratorResult<T>> => {
    if (!returned) {
      returned = true;
      await parts.return?.(value);
    }
    return { done: true, value: undefined };
  };
  return {
    next: () => (ended() ? finish() : parts.next()),
    return: finish,
    throw: (error: unknown) => (parts.throw ? parts.throw(error) : Promise.reject(error)),
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}
