import DataLoader from 'dataloader';
import { buildRequest, type InputLimits, type OperationName, type PimArgs, type PimRequest } from './endpoints.ts';
import type { PimClient } from './client.ts';

export interface PimApiOptions {
  client: PimClient;
  /** Headers sent with every call of this GraphQL request (credentials, request id). */
  headers: Record<string, string>;
  limits: InputLimits;
  /** Aborted when the GraphQL request is cancelled, so upstream calls stop with it. */
  signal?: AbortSignal;
}

/** The three REST operations as one GraphQL request sees them. */
export type PimApi = Record<OperationName, (args: PimArgs) => Promise<unknown>>;

/**
 * Creates the per-request API. One DataLoader keyed by the request path means identical calls
 * from aliases, repeated fields or fragments are sent once; distinct calls go out in parallel.
 */
export function createPimApi({ client, headers, limits, signal }: PimApiOptions): PimApi {
  const loader = new DataLoader<PimRequest, unknown, string>(
    // The REST service has no batch endpoint: a batch is a set of parallel GETs, one per key.
    (requests) =>
      Promise.all(requests.map((r) => client.get(r, headers, signal).catch((error: unknown) => toError(error)))),
    { cacheKeyFn: (r) => r.path },
  );
  const call = (operation: OperationName) => (args: PimArgs) => loader.load(buildRequest(operation, args, limits));
  return {
    searchProducts: call('searchProducts'),
    getClassificationGroup: call('getClassificationGroup'),
    listClassificationGroups: call('listClassificationGroups'),
  };
}

// DataLoader fails a single key only when its slot holds an Error instance.
function toError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
