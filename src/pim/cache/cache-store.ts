import type { interceptors } from 'undici';

/** What undici's cache interceptor asks of a store: get, createWriteStream and delete by key. */
export type CacheStore = NonNullable<NonNullable<Parameters<typeof interceptors.cache>[0]>['store']>;
/** Method, origin, path (with query) and the request's headers. */
export type CacheKey = Parameters<CacheStore['get']>[0];
/** A response's status, headers, Vary values and freshness times, as the interceptor stores it. */
export type CacheValue = Parameters<CacheStore['createWriteStream']>[1];
/** A stored response as a store hands it back. */
export type GetResult = NonNullable<Awaited<ReturnType<CacheStore['get']>>>;
