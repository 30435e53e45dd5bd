import { Agent, request } from 'undici';
import { readAnswer } from './answer.ts';
import { createByteLimits, type ByteAccount, type ByteLimitsOptions } from './byte-limits.ts';
import { pimError, PimError } from './errors.ts';
import { createResponseCache, type ResponseCacheOptions } from './cache.ts';
import { createAdmission, type AdmissionDispatchOptions } from './admission.ts';
import { createCoalescing } from './coalesce.ts';
import { createCredentialKey, createCredentialSecrets } from './credential.ts';
import { createFairQueue } from './fair-queue.ts';
import { checkedUrl } from './guards.ts';
import { createResilience, type ResilienceHooks, type ResilienceOptions } from './resilience.ts';
import type { Layer, Send, UpstreamStatus } from './types.ts';

export interface PimClientOptions {
  /** Scheme, host and optional path prefix in front of `/pxm/pimapi/v1`. */
  baseUrl: string;
  connectTimeoutMs: number;
  /** Deadline of one upstream call, headers and body included. */
  requestTimeoutMs: number;
  /** Upstream connections, and so calls in flight at once; the rest wait in a queue fair across credentials. */
  maxConcurrency: number;
  /** Calls one credential may have in flight at once. */
  maxConcurrencyPerCredential: number;
  /** Lower-case headers that identify the caller; coalescing and caching never cross them. */
  credentialHeaders: readonly string[];
  /** Share identical in-flight GETs of one credential. */
  coalesce: boolean;
  /** HTTP cache of upstream answers; false turns it off. */
  cache: Omit<ResponseCacheOptions, 'credentialKey' | 'baseUrl'> | false;
  /** Metrics and spans; innermost, so each attempt (every retry) is measured with its own status. */
  telemetry?: Layer | undefined;
  /** Largest upstream body read; a bigger one is UPSTREAM_ERROR. */
  maxBodyBytes: number;
  /** Caps on upstream bytes per GraphQL request and held by the process at once. */
  byteLimits: ByteLimitsOptions;
  /** Retries and circuit breaker, and what they report. */
  resilience: ResilienceOptions & ResilienceHooks;
}

/** Speaks HTTP to the REST service; knows nothing about GraphQL. */
export interface PimClient {
  get: Send;
  close(): Promise<void>;
  /** Breaker state, for readiness and metrics. */
  status: UpstreamStatus;
  /** Opens the byte account of one GraphQL request (or probe); release it when its response is done. */
  openByteAccount(): ByteAccount;
}

/** Creates the upstream client around one pooled undici Agent. */
export function createPimClient({
  baseUrl,
  connectTimeoutMs,
  requestTimeoutMs,
  maxConcurrency,
  maxConcurrencyPerCredential,
  credentialHeaders,
  coalesce,
  cache: cacheOptions,
  telemetry,
  maxBodyBytes,
  byteLimits,
  resilience: resilienceOptions,
}: PimClientOptions): PimClient {
  const bytesHeld = createByteLimits(byteLimits);
  const base = new URL(baseUrl);
  const agent = new Agent({
    connect: { timeout: connectTimeoutMs },
    connections: maxConcurrency,
    headersTimeout: requestTimeoutMs,
    bodyTimeout: requestTimeoutMs,
  });
  const credentialKey = createCredentialKey(credentialHeaders);
  const secretsOf = createCredentialSecrets(credentialHeaders);
  const cache = cacheOptions === false ? undefined : createResponseCache({ ...cacheOptions, credentialKey, baseUrl });
  const queue = createFairQueue({ maxConcurrency, maxPerKey: maxConcurrencyPerCredential });
  const admission = createAdmission({ queue, keyOf: credentialKey, requestTimeoutMs });
  // compose() wraps outward: the cache answers hits before admission, so hits never queue.
  const dispatcher = cache ? agent.compose(admission, cache.interceptor) : agent.compose(admission);

  const send: Send = async (pimRequest, { headers, signal, deadline, bytes, queueKey, queueShare }) => {
    // Read by the admission interceptor: the budget bounds both the queue wait and the call.
    const admitted: AdmissionDispatchOptions = { deadline, queueKey, queueShare };
    try {
      const response = await request(checkedUrl(base, pimRequest.path), {
        dispatcher,
        method: 'GET',
        headers: { ...headers, accept: 'application/json' },
        signal,
        ...admitted,
      });
      return await readAnswer(response, maxBodyBytes, secretsOf(headers), bytes);
    } catch (error) {
      if (error instanceof PimError) throw error;
      // The caller went away: let its own abort reason through rather than blame the PIM.
      if (signal?.aborted) throw signal.reason;
      throw classifyFailure(error);
    }
  };
  const resilience = createResilience(resilienceOptions);
  // Outermost first: each layer sees the calls of the one before it. Coalescing shares one flight, and
  // so one breaker decision and one retry sequence; the HTTP cache sits inside send, in the dispatcher.
  const layers: Layer[] = [
    ...(coalesce ? [createCoalescing({ credentialKey })] : []),
    ...resilience.layers,
    ...(telemetry ? [telemetry] : []),
  ];
  const layered = layers.reduceRight<Send>((next, layer) => layer(next), send);
  // A fresh answer already parsed skips every layer: nothing is sent, so nothing to share, guard or time.
  const get: Send = !cache
    ? layered
    : async (pimRequest, call) => {
        // A call that asks past the caches (the readiness probe) must reach the HTTP cache's revalidation.
        const cached = asksPastCache(call.headers) ? undefined : cache.lookup(pimRequest.path, call.headers);
        if (cached !== undefined) return cached;
        const answer = await layered(pimRequest, call);
        cache.remember(pimRequest.path, call.headers, answer);
        return answer;
      };
  return {
    get,
    close: async () => {
      resilience.close();
      await Promise.all([agent.close(), cache?.close()]);
    },
    status: resilience.status,
    openByteAccount: () => bytesHeld.open(),
  };
}

const asksPastCache = (headers: Record<string, string>) => /\bno-cache\b/i.test(headers['cache-control'] ?? '');

const timeoutCodes = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);
const unavailableCodes = new Set([
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

function classifyFailure(error: unknown): PimError {
  const code = (error as { code?: string }).code ?? '';
  if (timeoutCodes.has(code)) return pimError('UPSTREAM_TIMEOUT', error);
  if (unavailableCodes.has(code)) return pimError('UPSTREAM_UNAVAILABLE', error);
  return pimError('UPSTREAM_ERROR', error);
}
