import type { YogaInitialContext } from 'graphql-yoga';
import { createPimApi, type PimApi } from './pim/loaders.ts';
import type { PimClient } from './pim/client.ts';
import type { UpstreamCredentials } from './pim/credential.ts';
import type { InputLimits, PimRequest } from './pim/endpoints.ts';
import { requestIdOf } from './plugins/request-log.ts';
import { withErrorContract } from './errors.ts';

/** What this server adds to Yoga's context. */
export interface PimContext {
  pim: PimApi;
}

/** What every resolver receives. */
export type Context = YogaInitialContext & PimContext;

export interface ContextOptions {
  client: PimClient;
  limits: InputLimits;
  /** Builds the credential headers of a request's upstream calls. */
  credentials: UpstreamCredentials;
  /** Overall deadline of one HTTP request's upstream work. */
  budgetMs: number;
  /** Distinct upstream calls one HTTP request may cause. */
  maxUpstreamCalls: number;
  /** Told about each load answered by the request's DataLoader cache (a deduplicated call). */
  onDedup?: ((request: PimRequest) => void) | undefined;
}

/**
 * Builds the per-request context factory. The PIM API is cached per HTTP request rather than
 * per operation, so every operation of a batched request shares one set of loaders.
 */
export function createContextFactory({
  client,
  limits,
  credentials,
  budgetMs,
  maxUpstreamCalls,
  onDedup,
}: ContextOptions) {
  const apis = new WeakMap<Request, PimApi>();
  return ({ request }: YogaInitialContext): PimContext => {
    let pim = apis.get(request);
    if (!pim) {
      // The request id travels upstream so PIM logs can be matched with ours.
      const headers = { ...credentials.headers(request.headers), 'x-request-id': requestIdOf(request) };
      pim = withErrorContract(
        createPimApi({
          client,
          limits,
          headers,
          signal: request.signal,
          // The budget is a deadline, not a timer: each call gets at most what is left of it.
          deadline: Date.now() + budgetMs,
          maxCalls: maxUpstreamCalls,
          onDedup,
        }),
      );
      apis.set(request, pim);
    }
    return { pim };
  };
}
