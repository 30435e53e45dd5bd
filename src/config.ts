import { z } from 'zod';

const int = (min: number, max: number) => {
  const error = `an integer from ${min} to ${max}`;
  return z.coerce.number({ error }).int({ error }).min(min, { error }).max(max, { error });
};
const flag = z
  .enum(['true', 'false', '1', '0'], { error: 'true or false' })
  .transform((v) => v === 'true' || v === '1');
const list = z.string().transform((v) =>
  v
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean),
);

/**
 * Every setting the server reads from the environment, with its one default: modules take
 * required options. The README's configuration table lists the same names and defaults
 * (test/config.test.ts holds the two in step).
 */
export const settings = z.object({
  PORT: int(0, 65535).default(4000),
  HOST: z.string().min(1).optional(),
  NODE_ENV: z
    .enum(['development', 'production', 'test'], { error: 'one of development, production, test' })
    .default('development'),
  LOG_LEVEL: z
    .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
      error: 'one of fatal, error, warn, info, debug, trace, silent',
    })
    .default('info'),
  PIM_BASE_URL: z
    .url({ protocol: /^https?$/, error: 'an absolute http(s) URL such as https://tenant.example.com' })
    .transform((v) => v.replace(/\/+$/, ''))
    .optional(),
  PIM_API_KEY: z.string().min(1).optional(),
  PIM_DEMO: flag.default(false),
  PIM_FORWARD_HEADERS: list.default(['x-api-key', 'authorization']),
  PIM_CONNECT_TIMEOUT_MS: int(1, 60_000).default(2_000),
  PIM_TIMEOUT_MS: int(1, 120_000).default(10_000),
  PIM_MAX_CONCURRENCY: int(1, 1_024).default(16),
  // Unset: three quarters of PIM_MAX_CONCURRENCY (the why is where loadConfig computes it).
  PIM_MAX_CONCURRENCY_PER_CREDENTIAL: int(1, 1_024).optional(),
  // Unset: inside one credential, connections are shared between GraphQL requests. Set only where a
  // proxy in front overwrites this header; a client could otherwise pick its own share.
  TRUSTED_CLIENT_IP_HEADER: z
    .string()
    .regex(/^[!#$%&'*+.^_`|~\w-]+$/, { error: 'a header name such as x-real-ip or x-forwarded-for' })
    .transform((name) => name.toLowerCase())
    .optional(),
  MAX_PAGE_SIZE: int(1, 100_000).default(200),
  MAX_ID_LENGTH: int(1, 4_096).default(128),
  GRAPHQL_BATCHING: flag.default(false),
  // Abuse limits, security and resilience (see docs/operations.md "Limits and resilience").
  GRAPHQL_MAX_DEPTH: int(1, 1_000).default(10),
  GRAPHQL_MAX_ALIASES: int(0, 10_000).default(15),
  GRAPHQL_MAX_TOKENS: int(10, 1_000_000).default(1_000),
  GRAPHQL_MAX_DIRECTIVES: int(0, 10_000).default(50),
  GRAPHQL_MAX_COST: int(1, 10_000_000).default(2_000),
  GRAPHQL_BUDGET_MS: int(1, 600_000).default(20_000),
  PIM_MAX_CALLS_PER_REQUEST: int(1, 100_000).default(50),
  GRAPHQL_INTROSPECTION: flag.optional(),
  FEDERATION_SDL: flag.optional(),
  // Entity representations one request may resolve through `_entities`, all its operations together.
  FEDERATION_MAX_REPRESENTATIONS: int(1, 100_000).default(100),
  GRAPHQL_CSRF_PREVENTION: flag.default(false),
  CORS_ORIGINS: list
    .refine((origins) => !origins.some((o) => o.includes('*')), {
      error: 'the origins that may call, such as https://app.example.com,https://admin.example.com (* is refused)',
    })
    .default([]),
  HTTP_MAX_BODY_BYTES: int(1_024, 26_214_400).default(65_536),
  HTTP_MAX_HEADER_BYTES: int(1_024, 1_048_576).default(16_384),
  HTTP_HEADERS_TIMEOUT_MS: int(100, 600_000).default(10_000),
  HTTP_REQUEST_TIMEOUT_MS: int(100, 600_000).default(30_000),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: int(100, 600_000).default(5_000),
  // Requests one process serves at once; past it a request gets 503 at once rather than holding memory
  // for its whole budget behind a slow PIM (a burst of held requests could otherwise exhaust the heap).
  HTTP_MAX_IN_FLIGHT: int(1, 1_000_000).default(1_000),
  SHUTDOWN_GRACE_MS: int(0, 600_000).default(10_000),
  READINESS_MAX_AGE_MS: int(100, 3_600_000).default(30_000),
  PIM_RETRIES: int(0, 10).default(2),
  PIM_RETRY_BASE_MS: int(1, 60_000).default(100),
  PIM_BREAKER_THRESHOLD: int(1, 1_000).default(10),
  PIM_BREAKER_HALF_OPEN_MS: int(100, 600_000).default(10_000),
  PIM_MAX_BODY_BYTES: int(1_024, 1_073_741_824).default(8_388_608),
  PIM_MAX_REQUEST_BYTES: int(1_024, 4_294_967_296).default(33_554_432),
  PIM_MAX_INFLIGHT_BYTES: int(1_024, 68_719_476_736).default(33_554_432),
  OTEL_EXPORTER_OTLP_ENDPOINT: z
    .url({ protocol: /^https?$/, error: 'an http(s) URL such as http://collector:4318' })
    .optional(),
  OTEL_SERVICE_NAME: z.string().min(1).default('pim-graphql-facade'),
  METRICS_PATH: z
    .string()
    .regex(/^(\/[\w.-]+)+$|^off$/, { error: 'a path such as /metrics, or off' })
    .default('/metrics'),
  METRICS_PORT: int(0, 65535).optional(),
  PIM_COALESCE: flag.default(true),
  PIM_CACHE: flag.default(true),
  PIM_CACHE_TTL_MS: int(0, 86_400_000).default(0),
  PIM_CACHE_MAX_MB: int(1, 65_536).default(64),
  // Stale answers (docs/operations.md "Stale answers"): a failed call gets the last good answer of
  // its URL and credential if it is at most this old; 0 never serves stale data on errors.
  PIM_STALE_IF_ERROR_S: int(0, 31_536_000).default(86_400),
  // An answer past its freshness is served at once for this long while one refresh runs; 0: off.
  PIM_STALE_WHILE_REVALIDATE_S: int(0, 31_536_000).default(0),
  // Bound on the in-process last-known-good copies (Redis keeps its own, each for its window).
  PIM_STALE_MAX_MB: int(1, 65_536).default(64),
  // Bearer token of POST /cache/invalidate; unset, the endpoint does not exist.
  CACHE_ADMIN_TOKEN: z.string().min(16, { error: 'a token of at least 16 characters' }).optional(),
  // Header naming the catalogs and classifications of a cacheable response, for CDN purges by tag.
  SURROGATE_KEY_HEADER: z
    .string()
    .regex(/^[A-Za-z0-9-]+$/, { error: 'a header name such as Surrogate-Key, Cache-Tag or xkey' })
    .default('Surrogate-Key'),
  // Whole serialized results of repeated operations, kept while their upstream answers are fresh; 0 turns it off.
  RESPONSE_CACHE_MAX_MB: int(0, 65_536).default(32),
  GRAPHQL_APQ: flag.default(true),
  APQ_MAX_DOCUMENTS: int(1, 1_000_000).default(1_000),
  APQ_MAX_BYTES: int(1_024, 1_073_741_824).default(4_194_304),
  APQ_TTL_S: int(1, 31_536_000).default(86_400),
  PERSISTED_DOCUMENTS_PATH: z.string().min(1).optional(),
  PERSISTED_DOCUMENTS_ONLY: flag.default(false),
  REDIS_URL: z.url({ protocol: /^rediss?$/, error: 'a redis:// or rediss:// URL' }).optional(),
  // Longest wait for one Redis reply before it counts as a miss (or a skipped write); at most half the budget.
  REDIS_TIMEOUT_MS: int(1, 60_000).default(200),
});

export type Settings = z.output<typeof settings>;

/** The validated, typed configuration every other module takes as options. */
export type Config = ReturnType<typeof toConfig>;

/** Thrown for a bad environment; its message is the one line main.ts prints before exiting. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Reads and validates the environment once; the only module that touches `process.env`. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  // Empty strings count as unset, the way shells and .env files usually mean them.
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = settings.safeParse(present);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const name = String(issue.path[0]);
    throw new ConfigError(
      // A token refused for its length is still someone's secret: the line must not print it.
      `Invalid ${name}=${name === 'CACHE_ADMIN_TOKEN' ? '***' : JSON.stringify(withoutPassword(present[name]))}: expected ${issue.message}`,
    );
  }
  const refusal = unsafeCombination(parsed.data);
  if (refusal) throw new ConfigError(refusal);
  return toConfig(parsed.data);
}

/**
 * The settings as option groups, each shaped as the options of the module app.ts hands it to (the
 * compiler checks that there), so app.ts passes them through. Durations are ms, sizes bytes.
 */
function toConfig(e: Settings) {
  const introspection = e.GRAPHQL_INTROSPECTION ?? e.NODE_ENV !== 'production';
  const redis = { redisUrl: e.REDIS_URL, redisTimeoutMs: redisTimeoutMs(e) };
  return {
    port: e.PORT,
    /** Undefined listens on all interfaces, like `node:http` does by default. */
    host: e.HOST,
    development: e.NODE_ENV === 'development',
    logLevel: e.LOG_LEVEL,
    /** The part of the service URL before `/pxm`; unset only where the demo is served. */
    pimBaseUrl: e.PIM_BASE_URL,
    /** Serve the bundled demo catalog and call it instead of PIM_BASE_URL: asked for, or nothing else to call. */
    demo: e.PIM_DEMO || !e.PIM_BASE_URL,
    /** createUpstreamCredentials: lower-case incoming headers passed on, and the server's own key. */
    credentials: { forwardHeaders: e.PIM_FORWARD_HEADERS, apiKey: e.PIM_API_KEY },
    /** createPimClient, less what app.ts builds (the base URL, credential names, hooks). */
    pim: {
      connectTimeoutMs: e.PIM_CONNECT_TIMEOUT_MS,
      requestTimeoutMs: e.PIM_TIMEOUT_MS,
      maxConcurrency: e.PIM_MAX_CONCURRENCY,
      maxConcurrencyPerCredential: Math.min(
        e.PIM_MAX_CONCURRENCY,
        // Three quarters: one caller may use most of the pool, and a quarter always stays free for the others.
        e.PIM_MAX_CONCURRENCY_PER_CREDENTIAL ?? Math.max(1, Math.floor((e.PIM_MAX_CONCURRENCY * 3) / 4)),
      ),
      coalesce: e.PIM_COALESCE,
      cache: e.PIM_CACHE && {
        defaultTtlMs: e.PIM_CACHE_TTL_MS,
        maxBytes: e.PIM_CACHE_MAX_MB * 2 ** 20,
        maxEntryBytes: e.PIM_MAX_BODY_BYTES,
        ...redis,
      },
      /** Last-known-good and stale-while-revalidate; the copies live in Redis too when REDIS_URL is set. */
      stale: {
        staleIfErrorMs: e.PIM_STALE_IF_ERROR_S * 1_000,
        staleWhileRevalidateMs: e.PIM_STALE_WHILE_REVALIDATE_S * 1_000,
        maxBytes: e.PIM_STALE_MAX_MB * 2 ** 20,
        ...redis,
        // Invalidations sent to another instance end freshness here within this time.
        invalidationPollMs: 1_000,
      },
      maxBodyBytes: e.PIM_MAX_BODY_BYTES,
      byteLimits: { maxRequestBytes: e.PIM_MAX_REQUEST_BYTES, maxInflightBytes: e.PIM_MAX_INFLIGHT_BYTES },
      resilience: {
        retries: e.PIM_RETRIES,
        retryBaseMs: e.PIM_RETRY_BASE_MS,
        breakerThreshold: e.PIM_BREAKER_THRESHOLD,
        halfOpenAfterMs: e.PIM_BREAKER_HALF_OPEN_MS,
      },
    },
    /** createContextFactory: what one GraphQL request may ask of the PIM. */
    request: {
      limits: { maxPageSize: e.MAX_PAGE_SIZE, maxIdLength: e.MAX_ID_LENGTH },
      budgetMs: e.GRAPHQL_BUDGET_MS,
      maxUpstreamCalls: e.PIM_MAX_CALLS_PER_REQUEST,
      maxRepresentations: e.FEDERATION_MAX_REPRESENTATIONS,
      clientIpHeader: e.TRUSTED_CLIENT_IP_HEADER,
    },
    /** useSecurity; introspection also decides GraphiQL and suggestions. */
    security: {
      introspection,
      csrfPrevention: e.GRAPHQL_CSRF_PREVENTION,
      // Federation's `_service { sdl }` follows introspection unless FEDERATION_SDL says otherwise.
      serviceSdl: e.FEDERATION_SDL ?? introspection,
    },
    /** useAbuseLimits: operation shape limits (GraphQL Armor and the upstream cost rule). */
    limits: {
      maxDepth: e.GRAPHQL_MAX_DEPTH,
      maxAliases: e.GRAPHQL_MAX_ALIASES,
      maxTokens: e.GRAPHQL_MAX_TOKENS,
      maxDirectives: e.GRAPHQL_MAX_DIRECTIVES,
      maxCost: e.GRAPHQL_MAX_COST,
      blockSuggestions: !introspection,
    },
    /** useHttpCaching. */
    httpCaching: { forwardHeaders: e.PIM_FORWARD_HEADERS, surrogateKeyHeader: e.SURROGATE_KEY_HEADER },
    batching: e.GRAPHQL_BATCHING,
    corsOrigins: e.CORS_ORIGINS,
    /** createServer (http/server.ts). */
    http: {
      maxBodyBytes: e.HTTP_MAX_BODY_BYTES,
      maxHeaderBytes: e.HTTP_MAX_HEADER_BYTES,
      headersTimeoutMs: e.HTTP_HEADERS_TIMEOUT_MS,
      requestTimeoutMs: e.HTTP_REQUEST_TIMEOUT_MS,
      keepAliveTimeoutMs: e.HTTP_KEEP_ALIVE_TIMEOUT_MS,
      maxInFlight: e.HTTP_MAX_IN_FLIGHT,
      shutdownGraceMs: e.SHUTDOWN_GRACE_MS,
    },
    /** createReadiness: how recent the upstream's last answer must be. */
    readinessMaxAgeMs: e.READINESS_MAX_AGE_MS,
    /** createObservability, and where main.ts serves the metrics. */
    observability: {
      /** OTLP/HTTP collector base URL; undefined turns tracing off. */
      otlpEndpoint: e.OTEL_EXPORTER_OTLP_ENDPOINT,
      serviceName: e.OTEL_SERVICE_NAME,
      /** Where Prometheus scrapes; false serves no metrics endpoint. */
      metricsPath: e.METRICS_PATH === 'off' ? (false as const) : e.METRICS_PATH,
      /** A port of their own for the metrics; undefined serves them on the main port. */
      metricsPort: e.METRICS_PORT,
    },
    cacheAdminToken: e.CACHE_ADMIN_TOKEN,
    /** Cache of serialized results; false when it or the upstream cache (PIM_CACHE) is off. */
    responseCache: e.PIM_CACHE && e.RESPONSE_CACHE_MAX_MB > 0 && { maxBytes: e.RESPONSE_CACHE_MAX_MB * 2 ** 20 },
    /** createPersistedDocuments: the trusted-documents manifest and APQ. */
    persisted: {
      path: e.PERSISTED_DOCUMENTS_PATH,
      only: e.PERSISTED_DOCUMENTS_ONLY,
      apq: e.GRAPHQL_APQ && {
        maxDocuments: e.APQ_MAX_DOCUMENTS,
        maxBytes: e.APQ_MAX_BYTES,
        ttlMs: e.APQ_TTL_S * 1_000,
        // A document bigger than a request body could never have been sent.
        maxDocumentBytes: e.HTTP_MAX_BODY_BYTES,
        ...redis,
      },
    },
  };
}

// A Redis miss must leave the request most of its budget for the upstream call it then makes.
const redisTimeoutMs = (e: Settings) => Math.max(1, Math.min(e.REDIS_TIMEOUT_MS, Math.floor(e.GRAPHQL_BUDGET_MS / 2)));

/** Settings each valid alone whose combination would quietly do what nobody meant. */
function unsafeCombination(e: Settings): string | undefined {
  if (e.NODE_ENV === 'production' && !e.PIM_BASE_URL && !e.PIM_DEMO) {
    return 'PIM_BASE_URL is required when NODE_ENV=production (set PIM_DEMO=true to serve the bundled demo catalog)';
  }
  if (e.METRICS_PORT !== undefined && e.METRICS_PATH === 'off')
    return 'METRICS_PORT is set but METRICS_PATH=off serves no metrics: unset one of the two';
  if (e.PERSISTED_DOCUMENTS_ONLY && !e.PERSISTED_DOCUMENTS_PATH)
    return 'PERSISTED_DOCUMENTS_ONLY=true needs PERSISTED_DOCUMENTS_PATH, the manifest of the documents allowed';
  return undefined;
}

// A URL setting may carry a password (REDIS_URL): the error line must not print it.
function withoutPassword(value: string | undefined): string | undefined {
  // Everything up to the last `@` of the authority: a generated password may hold `/`, `#` or `?`.
  return value?.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/@]*:).*@/i, '$1***@');
}
