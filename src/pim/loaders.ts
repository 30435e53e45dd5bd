import DataLoader from 'dataloader';
import { buildRequest, type InputLimits, type OperationName, type PimArgs, type PimRequest } from './endpoints.ts';
import type { PimClient } from './client.ts';
import { PimError } from './errors.ts';

export interface PimApiOptions {
  client: PimClient;
  /** Headers sent with every call of this GraphQL request (credentials, request id). */
  headers: Record<string, string>;
  limits: InputLimits;
  /** Aborted when the GraphQL request is cancelled, so upstream calls stop with it. */
  signal?: AbortSignal;
  /** Distinct calls this API may send; the ones past it fail with BAD_USER_INPUT unsent. @default Infinity */
  maxCalls?: number;
  /** Told about each load the DataLoader answers from its cache instead of a new call. */
  onDedup?: (request: PimRequest) => void;
}

/** The three REST operations as one GraphQL request sees them. */
export type PimApi = Record<OperationName, (args: PimArgs) => Promise<unknown>>;

/**
 * Creates the per-request API. One DataLoader keyed by the request path means identical calls
 * from aliases, repeated fields or fragments are sent once; distinct calls go out in parallel.
 */
export function createPimApi({ client, headers, limits, signal, maxCalls = Infinity, onDedup }: PimApiOptions): PimApi {
  const loader = new DataLoader<PimRequest, unknown, string>(
    // The REST service has no batch endpoint: a batch becomes parallel GETs, one per key. Each key
    // settles with its own promise, so a fast field (or the first part of a @defer response)
    // never waits for the slowest call of its batch.
    async (requests) => requests.map((r) => client.get(r, headers, signal)),
    { cacheKeyFn: (r) => r.path },
  );
  const distinct = new Set<string>();
  const call = (operation: OperationName) => (args: PimArgs) => {
    const request = buildRequest(operation, args, limits);
    if (!distinct.has(request.path)) {
      if (distinct.size >= maxCalls) throw tooManyCalls(maxCalls);
      distinct.add(request.path);
    } else onDedup?.(request);
    return loader.load(request);
  };
  return {
    searchProducts: call('searchProducts'),
    getClassificationGroup: call('getClassificationGroup'),
    listClassificationGroups: call('listClassificationGroups'),
  };
}

function tooManyCalls(max: number): PimError {
  return new PimError('BAD_USER_INPUT', `This request needs more than ${max} distinct catalog calls; split it up`);
}
