import type { YogaInitialContext } from 'graphql-yoga';
import { createPimApi, type PimApi } from './pim/loaders.ts';
import type { PimClient } from './pim/client.ts';
import type { InputLimits, PimRequest } from './pim/endpoints.ts';
import { requestIdOf } from './plugins/request-log.ts';
import { startBudget } from './pim/budget.ts';
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
  /** Lower-case names of incoming headers to pass on to the PIM. */
  forwardHeaders: readonly string[];
  /** Sent as `X-API-KEY` when the caller sent none. */
  apiKey?: string | undefined;
  /** Overall deadline of one HTTP request's upstream work. @default 20000 */
  budgetMs?: number;
  /** Distinct upstream calls one HTTP request may cause. @default 50 */
  maxUpstreamCalls?: number;
  /** Told about each load answered by the request's DataLoader cache (a deduplicated call). */
  onDedup?: (request: PimRequest) => void;
}

/**
 * Builds the per-request context factory. The PIM API is cached per HTTP request rather than
 * per operation, so every operation of a batched request shares one set of loaders.
 */
export function createContextFactory({
  client,
  limits,
  forwardHeaders,
  apiKey,
  budgetMs = 20_000,
  maxUpstreamCalls = 50,
  onDedup,
}: ContextOptions) {
  const apis = new WeakMap<Request, PimApi>();
  return ({ request }: YogaInitialContext): PimContext => {
    let pim = apis.get(request);
    if (!pim) {
      // The request id travels upstream so PIM logs can be matched with ours.
      const headers = {
        ...upstreamHeaders(request.headers, forwardHeaders, apiKey),
        'x-request-id': requestIdOf(request),
      };
      startBudget(headers, budgetMs);
      pim = withErrorContract(
        createPimApi({ client, limits, headers, signal: request.signal, maxCalls: maxUpstreamCalls, onDedup }),
      );
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
    // An empty value (GraphiQL's blank X-API-KEY slot) counts as absent, so the server's key applies.
    if (value !== null && value !== '') headers[name] = value;
  }
  if (apiKey !== undefined && headers['x-api-key'] === undefined) headers['x-api-key'] = apiKey;
  return headers;
}
