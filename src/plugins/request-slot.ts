/**
 * A value one module keeps on a request for as long as the request lives, under a private symbol.
 * Not a WeakMap keyed by the request: each request would add an ephemeron entry that every garbage
 * collection has to trace, a cost paid on every request of a busy server.
 */
export function requestSlot<T>(description: string) {
  const key = Symbol(description);
  const slots = (request: Request) => request as unknown as Record<symbol, T | undefined>;
  return {
    get: (request: Request): T | undefined => slots(request)[key],
    set: (request: Request, value: T): void => void (slots(request)[key] = value),
  };
}

/**
 * Marks the requests whose body is a batch (GRAPHQL_BATCHING) once it is parsed: `onRequestParse` is a plugin's
 * hook, `isBatch` reads the mark.
 */
export function batchMarks() {
  const batches = requestSlot<true>('batch');
  return {
    onRequestParse: ({ request }: { request: Request }) => ({
      onRequestParseDone({ requestParserResult }: { requestParserResult: unknown }) {
        if (Array.isArray(requestParserResult)) batches.set(request, true);
      },
    }),
    isBatch: (request: Request) => batches.get(request) === true,
  };
}
