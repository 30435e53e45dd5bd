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
