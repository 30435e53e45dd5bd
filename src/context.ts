import type { YogaInitialContext } from 'graphql-yoga';
import { createPimApi, type PimApi } from './pim/loaders.ts';
import type { PimClient } from './pim/client.ts';
import type { InputLimits } from './pim/endpoints.ts';

/** What this server adds to Yoga's context. */
export interface PimContext {
  pim: PimApi;
}

/** What every resolver receives. */
export type Context = YogaInitialContext & PimContext;

export interface ContextOptions {
  client: PimClient;
  limits: InputLimits;
  /** Lower-case names of incoming headers to pass on to the PIM. */
  forwardHeaders: readonly string[];
  /** Sent as `X-API-KEY` when the caller sent none. */
  apiKey?: string | undefined;
}

/**
 * Builds the per-request context factory. The PIM API is cached per HTTP request rather than
 * per operation, so every operation of a batched request shares one set of loaders.
 */
export function createContextFactory({ client, limits, forwardHeaders, apiKey }: ContextOptions) {
  const apis = new WeakMap<Request, PimApi>();
  return ({ request }: YogaInitialContext): PimContext => {
    let pim = apis.get(request);
    if (!pim) {
      pim = createPimApi({
        client,
        limits,
        headers: upstreamHeaders(request.headers, forwardHeaders, apiKey),
        signal: request.signal,
      });
      apis.set(request, pim);
    }
    return { pim };
  };
}

function upstreamHeaders(
  incoming: Headers,
  forward: readonly string[],
  apiKey: string | undefined,
): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const name of forward) {
    const value = incoming.get(name);
    if (value !== null) headers[name] = value;
  }
  if (apiKey !== undefined && headers['x-api-key'] === undefined) headers['x-api-key'] = apiKey;
  return headers;
}
