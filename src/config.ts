import { z } from 'zod';

const int = (min: number, max: number) => {
  const error = `an integer from ${min} to ${max}`;
  // Decimal digits: Number() alone also reads `0x10` (16) and `1e4`, and an empty value as 0.
  const digits = z
    .string({ error })
    .trim()
    .regex(/^[+-]?\d+$/, { error });
  return digits.transform(Number).pipe(z.number({ error }).int({ error }).min(min, { error }).max(max, { error }));
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
const oneOf = <const T extends readonly [string, ...string[]]>(values: T) =>
  z.enum(values, { error: `one of ${values.join(', ')}` });
const url = (protocol: RegExp, error: string) => z.url({ protocol, error });
const urlOf = (value: string) => (URL.canParse(value) ? new URL(value) : new URL('http://x'));
// A base URL that paths are added to: a query or fragment in it would come before them, or be dropped.
// A bare `?` is a query too (URL.search reads it as ''), after which `${base}/v1/traces` would be the query.
const noQuery = (value: string) => !value.includes('?') && !value.includes('#');
const withPath = (base: string | undefined, path: string) => base && `${base.replace(/\/+$/, '')}${path}`;
// An origin as a browser's Origin header spells it: an http(s) URL's own origin; an app's or extension's scheme
// (capacitor://localhost, chrome-extension://<id>) has none in URL terms, but is sent as scheme://host. The web's other
// schemes send `null` (a file) or no Origin a page could have (ws:, blob:, …).
const isOrigin = (o: string) => {
  if (o.includes('*') || !URL.canParse(o)) return false;
  const { protocol, origin } = new URL(o);
  if (protocol === 'http:' || protocol === 'https:') return origin === o;
  return !webSchemes.has(protocol) && /^[a-z][a-z\d+.-]*:\/\/[^/?#@\s]+$/.test(o);
};
const webSchemes = new Set(['file:', 'ws:', 'wss:', 'ftp:', 'blob:', 'data:', 'about:', 'javascript:']);
// The paths the server answers itself or hands to GraphQL: METRICS_PATH may not be one.
const servedPaths = /^\/(graphql|health|readiness|cache\/invalidate|graphiql-assets)(\/|$)/;
// Response headers with a meaning of their own (framing, content, caching, CORS, cookies) or that the server writes
// (`accept`: the types a 406 lists, which the deletion of the tag header from every refusal took away), and those a
// proxy or CDN acts on (nginx's X-Accel-Redirect redirects internally; Surrogate-Control and CDN-Cache-Control set TTLs).
const reservedHeaders =
  /^(x-accel-.*|surrogate-control|(.*-)?cdn-cache-control|content-.*|access-control-.*|transfer-encoding|connection|keep-alive|upgrade|trailer|te|cache-control|pragma|expires|age|vary|etag|last-modified|date|set-cookie|location|retry-after|allow|accept|www-authenticate|server|strict-transport-security|x-content-type-options|referrer-policy|x-request-id)$/i;
// Request headers that frame or route a call, or that each call sets itself (`Accept: application/json`, the request's
// `x-request-id`, traced `traceparent`/`tracestate`): undici refuses to send some (every call failed), a forwarded
// header's value is blanked out of every answer as a credential, and one new each request made a credential of its own
// (no HTTP cache hit ever, no key ever seen accepted at the door).
const unforwardable =
  /^(accept|host|content-.*|connection|keep-alive|te|trailer|transfer-encoding|upgrade|expect|proxy-.*|x-request-id|traceparent|tracestate)$/;
// An HTTP field name (RFC 9110 §5.6.2 token), lower-cased as `list` leaves it.
const headerName = /^[!#$%&'*+.^_`|~0-9a-z-]+$/;
// A secret sent or compared as a header value: printable ASCII, spaces only inside (a header is trimmed at its ends).
const headerValue = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;
const decodes = (text: string) => {
  try {
    return (decodeURIComponent(text), true);
  } catch {
    return false;
  }
};
// OTEL_RESOURCE_ATTRIBUTES as the OpenTelemetry SDKs read it: `key=value` pairs by commas, values percent-encoded.
const attributesForm =
  'key=value pairs separated by commas, values percent-encoded: deployment.environment=prod,k8s.pod.name=web-1';
const attributePair = /^\s*([^\s=,]+)\s*=\s*([^,]*?)\s*$/;
const resourceAttributes = z
  .string()
  .transform((value) => value.split(',').filter((pair) => pair.trim() !== ''))
  .refine((pairs) => pairs.every((pair) => attributePair.test(pair) && decodes(attributePair.exec(pair)![2]!)), {
    error: attributesForm,
  })
  .transform((pairs) =>
    Object.fromEntries(
      pairs.map((pair) => {
        const [, key, value] = attributePair.exec(pair)!;
        // Keys are tokens, taken as they are; values are percent-encoded.
        return [key!, decodeURIComponent(value!)];
      }),
    ),
  );
const MiB = 2 ** 20;
const DAY_MS = 86_400_000;
const YEAR_MS = 31_536_000_000;

/** The name a setting had before its unit was made ms or bytes, and the factor that converts its values. */
interface Renamed {
  from: string;
  factor: number;
}
const wasSeconds = (from: string): Renamed => ({ from, factor: 1_000 });
const wasMiB = (from: string): Renamed => ({ from, factor: MiB });

/** One environment variable: its name, its schema (range and default) and, when renamed, its old name. */
class Setting<S extends z.ZodType = z.ZodType> {
  readonly name: string;
  readonly schema: S;
  readonly renamed: Renamed | undefined;
  constructor(name: string, schema: S, renamed?: Renamed) {
    [this.name, this.schema, this.renamed] = [name, schema, renamed];
  }
}
const env = <S extends z.ZodType>(name: string, schema: S, renamed?: Renamed) => new Setting(name, schema, renamed);

/**
 * Every setting the server reads, once each, at the place of the option it sets: the groups are
 * the options of the modules app.ts hands them to (the compiler checks that there), durations in
 * ms and sizes in bytes. `inputs` only feed the derivations of toConfig. docs/configuration.md
 * lists the same names and defaults (test/config.test.ts holds the two in step).
 */
const layout = {
  port: env('PORT', int(0, 65535).default(4000)),
  /** Undefined listens on all interfaces, like `node:http` does by default. */
  host: env('HOST', z.string().trim().min(1).optional()),
  logLevel: env('LOG_LEVEL', oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info')),
  /** The part of the service URL before `/pxm`; unset only where the demo is served. */
  pimBaseUrl: env(
    'PIM_BASE_URL',
    url(/^https?$/, 'an absolute http(s) URL such as https://tenant.example.com')
      // Calls are built from its origin and path: anything else in it would be dropped without a word.
      .refine((value) => !urlOf(value).username && !urlOf(value).password && noQuery(value), {
        error:
          'an absolute http(s) URL such as https://tenant.example.com, without user, password, query or fragment (the key goes in PIM_API_KEY)',
      })
      // The API root pasted whole, or an endpoint's URL (the root and a resource), would be called as
      // /pxm/pimapi/v1/…/pxm/pimapi/v1/…: every field NOT_FOUND, and readiness content with the 404 its probe expects.
      .refine((value) => !URL.canParse(value) || !/\/pxm(\/pimapi(\/|$)|\/*$)/.test(new URL(value).pathname), {
        error:
          'the part of the service URL before /pxm, such as https://tenant.example.com (each call adds /pxm/pimapi/v1)',
      })
      .transform((v) => v.replace(/\/+$/, ''))
      .optional(),
  ),
  // Arrays of up to 10 operations in one request.
  batching: env('GRAPHQL_BATCHING', flag.default(false)),
  corsOrigins: env(
    'CORS_ORIGINS',
    list
      // As a browser's Origin header spells one (RFC 6454): no path, no trailing slash, no default port; an entry
      // that none can equal would match nothing, silently.
      .refine((origins) => origins.every(isOrigin), {
        error:
          'the origins that may call, as browsers send them: https://app.example.com,http://localhost:3000 (no path, no trailing slash, * refused)',
      })
      .default([]),
  ),
  /** createReadiness: how recent the upstream's last answer must be. */
  readiness: { maxAgeMs: env('READINESS_MAX_AGE_MS', int(100, 3_600_000).default(30_000)) },
  // Bearer token of POST /cache/invalidate; unset, the endpoint does not exist.
  cacheAdminToken: env(
    'CACHE_ADMIN_TOKEN',
    z
      .string()
      .min(16, { error: 'a token of at least 16 characters' })
      // Compared with an Authorization header: one ending in a line break or spaces would refuse every purge.
      .regex(headerValue, { error: 'a token a header can carry: printable, no line break (a file ending in one?)' })
      .optional(),
  ),
  /** createUpstreamCredentials: lower-case incoming headers passed on, and the server's own key. */
  credentials: {
    forwardHeaders: env(
      'PIM_FORWARD_HEADERS',
      list
        .refine((names) => names.every((name) => headerName.test(name)), {
          error: 'header names such as x-api-key,authorization',
        })
        .refine((names) => !names.some((name) => unforwardable.test(name)), {
          error:
            'credential headers such as x-api-key,authorization (not Accept, Host, Content-*, a hop-by-hop header, or x-request-id, traceparent, tracestate, which each call sets)',
        })
        .default(['x-api-key', 'authorization']),
    ),
    // Sent as a header value: a line break (a key file written with echo) would fail every keyless call.
    apiKey: env(
      'PIM_API_KEY',
      z
        .string()
        .regex(headerValue, {
          error: 'a key a header can carry: printable characters, no line break (a key file ending in a newline?)',
        })
        .optional(),
    ),
  },
  /** createUpstream's PimSettings (pim/upstream.ts): each step's options, less the base URL, credentials and hooks. */
  pim: {
    connectTimeoutMs: env('PIM_CONNECT_TIMEOUT_MS', int(1, 60_000).default(2_000)),
    requestTimeoutMs: env('PIM_TIMEOUT_MS', int(1, 120_000).default(10_000)),
    // Upstream connections; more calls wait in a queue fair across credentials.
    maxConcurrency: env('PIM_MAX_CONCURRENCY', int(1, 1_024).default(16)),
    // Identical in-flight calls of one credential share one.
    coalesce: env('PIM_COALESCE', flag.default(true)),
    maxBodyBytes: env('PIM_MAX_BODY_BYTES', int(1_024, 1_073_741_824).default(8_388_608)),
    byteLimits: {
      // Upstream bytes one GraphQL request may read, and bytes the process holds at once.
      maxRequestBytes: env('PIM_MAX_REQUEST_BYTES', int(1_024, 4_294_967_296).default(33_554_432)),
      maxInflightBytes: env('PIM_MAX_INFLIGHT_BYTES', int(1_024, 68_719_476_736).default(33_554_432)),
    },
    resilience: {
      retries: env('PIM_RETRIES', int(0, 10).default(2)),
      // No backoff is longer than 2 s (RETRY_MAX_DELAY_MS, pim/steps/retry.ts): a first one above it would be 2 s.
      retryBaseMs: env('PIM_RETRY_BASE_MS', int(1, 2_000).default(100)),
      breakerThreshold: env('PIM_BREAKER_THRESHOLD', int(1, 1_000).default(10)),
      halfOpenAfterMs: env('PIM_BREAKER_HALF_OPEN_MS', int(100, 600_000).default(10_000)),
    },
    /** The HTTP cache of upstream answers (PIM_CACHE=false turns it off). */
    cache: {
      // Freshness of answers without caching headers; 0 caches only what says it may be cached.
      defaultTtlMs: env('PIM_CACHE_TTL_MS', int(0, 86_400_000).default(0)),
      maxBytes: env('PIM_CACHE_MAX_BYTES', int(MiB, 65_536 * MiB).default(64 * MiB), wasMiB('PIM_CACHE_MAX_MB')),
      // The answers in Redis, shared by the fleet; past it those soonest to expire go.
      redisMaxBytes: env('PIM_CACHE_REDIS_MAX_BYTES', int(64 * 1_024, 65_536 * MiB).default(64 * MiB)),
    },
    /** Stale answers (docs/operations.md): last-known-good and stale-while-revalidate. */
    stale: {
      // A failed call gets the last good answer of its URL and credential this recent; 0 never serves it.
      staleIfErrorMs: env('PIM_STALE_IF_ERROR_MS', int(0, YEAR_MS).default(DAY_MS), wasSeconds('PIM_STALE_IF_ERROR_S')),
      // An answer past its freshness is served at once for this long while one refresh runs; 0: off.
      staleWhileRevalidateMs: env(
        'PIM_STALE_WHILE_REVALIDATE_MS',
        int(0, YEAR_MS).default(0),
        wasSeconds('PIM_STALE_WHILE_REVALIDATE_S'),
      ),
      // The in-process copies (Redis keeps its own, each for its window).
      maxBytes: env('PIM_STALE_MAX_BYTES', int(MiB, 65_536 * MiB).default(64 * MiB), wasMiB('PIM_STALE_MAX_MB')),
      // The copies in Redis, shared by the fleet; past it those soonest to expire go.
      redisMaxBytes: env('PIM_STALE_REDIS_MAX_BYTES', int(64 * 1_024, 65_536 * MiB).default(64 * MiB)),
    },
  },
  /** createContextFactory: what one GraphQL request may ask of the PIM. */
  request: {
    limits: {
      maxPageSize: env('MAX_PAGE_SIZE', int(1, 100_000).default(200)),
      maxIdLength: env('MAX_ID_LENGTH', int(1, 4_096).default(128)),
    },
    // Time for one request's upstream work.
    budgetMs: env('GRAPHQL_BUDGET_MS', int(1, 600_000).default(20_000)),
    maxUpstreamCalls: env('PIM_MAX_CALLS_PER_REQUEST', int(1, 100_000).default(50)),
    // Entity representations one request may resolve through `_entities`, all its operations together.
    maxRepresentations: env('FEDERATION_MAX_REPRESENTATIONS', int(1, 100_000).default(100)),
    // Unset: inside one credential, connections are shared between GraphQL requests. Set only where a
    // proxy in front overwrites this header; a client could otherwise pick its own share.
    clientIpHeader: env(
      'TRUSTED_CLIENT_IP_HEADER',
      z
        .string()
        .regex(/^[!#$%&'*+.^_`|~\w-]+$/, { error: 'a header name such as x-real-ip or x-forwarded-for' })
        .transform((name) => name.toLowerCase())
        .optional(),
    ),
  },
  /** useSecurity; introspection (derived below) also decides GraphiQL and suggestions. */
  security: { csrfPrevention: env('GRAPHQL_CSRF_PREVENTION', flag.default(false)) },
  /** useAbuseLimits: operation shape limits (GraphQL Armor and the upstream cost rule). */
  limits: {
    maxDepth: env('GRAPHQL_MAX_DEPTH', int(1, 1_000).default(10)),
    maxAliases: env('GRAPHQL_MAX_ALIASES', int(0, 10_000).default(15)),
    maxTokens: env('GRAPHQL_MAX_TOKENS', int(10, 1_000_000).default(1_000)),
    maxDirectives: env('GRAPHQL_MAX_DIRECTIVES', int(0, 10_000).default(50)),
    // One field that calls the PIM costs 100 (plugins/cost.ts): below, every such field would be refused.
    maxCost: env('GRAPHQL_MAX_COST', int(100, 10_000_000).default(2_000)),
  },
  /** useHttpCaching. */
  httpCaching: {
    // Names the catalogs and classifications of a cacheable response, for CDN purges by tag.
    surrogateKeyHeader: env(
      'SURROGATE_KEY_HEADER',
      z
        .string()
        .regex(/^[A-Za-z0-9-]+$/, { error: 'a header name such as Surrogate-Key, Cache-Tag or xkey' })
        // The tags are written into it, and it is deleted from every response that may not be kept: Content-Length
        // broke every cacheable answer's framing, Vary or ETag took the tags in, Content-Type left streams untyped.
        .refine((name) => !reservedHeaders.test(name), {
          error:
            'a header of its own such as Surrogate-Key, Cache-Tag or xkey, not one HTTP or the server already gives a meaning (Content-*, Cache-Control, Vary, ETag, Set-Cookie, ...)',
        })
        .default('Surrogate-Key'),
    ),
  },
  /** createServer (http/server.ts). */
  http: {
    maxBodyBytes: env('HTTP_MAX_BODY_BYTES', int(1_024, 26_214_400).default(65_536)),
    maxHeaderBytes: env('HTTP_MAX_HEADER_BYTES', int(1_024, 1_048_576).default(16_384)),
    headersTimeoutMs: env('HTTP_HEADERS_TIMEOUT_MS', int(100, 600_000).default(10_000)),
    requestTimeoutMs: env('HTTP_REQUEST_TIMEOUT_MS', int(100, 600_000).default(30_000)),
    keepAliveTimeoutMs: env('HTTP_KEEP_ALIVE_TIMEOUT_MS', int(100, 600_000).default(5_000)),
    // A response whose client takes none of its bytes for this long is cut: its output waits in memory.
    sendTimeoutMs: env('HTTP_SEND_TIMEOUT_MS', int(100, 600_000).default(30_000)),
    // Requests one process serves at once; past it a request gets 503 at once rather than holding memory
    // for its whole budget behind a slow PIM (a burst of held requests could otherwise exhaust the heap).
    maxInFlight: env('HTTP_MAX_IN_FLIGHT', int(1, 1_000_000).default(1_000)),
    // The names clients reach this server by; a Host naming another gets 421 (DNS rebinding, http/request-head.ts).
    allowedHosts: env(
      'HTTP_ALLOWED_HOSTS',
      list
        .refine((names) => names.every((name) => /^(\*\.)?[a-z0-9_-]+(\.[a-z0-9_-]+)*\.?$/.test(name)), {
          error: 'host names as clients send them, without port: catalog.example.com,*.example.com',
        })
        .default([]),
    ),
    shutdownGraceMs: env('SHUTDOWN_GRACE_MS', int(0, 600_000).default(10_000)),
  },
  /** createObservability, and where main.ts serves the metrics. */
  observability: {
    /** OTLP/HTTP collector base URL; spans go to its /v1/traces (toConfig resolves the URL they are sent to). */
    otlpEndpoint: env(
      'OTEL_EXPORTER_OTLP_ENDPOINT',
      url(/^https?$/, 'an http(s) URL such as http://collector:4318')
        .refine(noQuery, { error: 'an http(s) URL such as http://collector:4318, without query or fragment' })
        .optional(),
    ),
    // Unset: `service.name` of OTEL_RESOURCE_ATTRIBUTES, else the app's name (observability/tracing.ts).
    serviceName: env('OTEL_SERVICE_NAME', z.string().min(1).optional()),
    resourceAttributes: env('OTEL_RESOURCE_ATTRIBUTES', resourceAttributes.optional()),
    /** Where Prometheus scrapes; false (`off`) serves no metrics endpoint. */
    metricsPath: env(
      'METRICS_PATH',
      z
        .string()
        .regex(/^(\/[\w.-]+)+$|^off$/, { error: 'a path such as /metrics, or off' })
        // One the server would refuse (`.` segments) or answer otherwise would never be scraped, or take a route over.
        .refine((path) => !/\/\.\.?(\/|$)/.test(path) && !servedPaths.test(path), {
          error:
            'a path of its own such as /metrics (not under /graphql, /health, /readiness, /cache/invalidate or /graphiql-assets; no . segments), or off',
        })
        .transform((path) => (path === 'off' ? (false as const) : path))
        .default('/metrics'),
    ),
    /** A port of their own for the metrics; undefined serves them on the main port. */
    metricsPort: env('METRICS_PORT', int(0, 65535).optional()),
  },
  /** createPersistedDocuments: the trusted-documents manifest and APQ. */
  persisted: {
    path: env('PERSISTED_DOCUMENTS_PATH', z.string().min(1).optional()),
    // Refuse every document not in the manifest.
    only: env('PERSISTED_DOCUMENTS_ONLY', flag.default(false)),
    /** Automatic persisted queries (GRAPHQL_APQ=false turns them off). */
    apq: {
      maxDocuments: env('APQ_MAX_DOCUMENTS', int(1, 1_000_000).default(1_000)),
      maxBytes: env('APQ_MAX_BYTES', int(1_024, 1_073_741_824).default(4_194_304)),
      ttlMs: env('APQ_TTL_MS', int(1_000, YEAR_MS).default(DAY_MS), wasSeconds('APQ_TTL_S')),
    },
  },
  inputs: {
    nodeEnv: env('NODE_ENV', oneOf(['development', 'production', 'test']).default('development')),
    // Serve the bundled demo catalog, also in production.
    demo: env('PIM_DEMO', flag.default(false)),
    // Unset: on, except in production.
    introspection: env('GRAPHQL_INTROSPECTION', flag.optional()),
    // Federation's `_service { sdl }`; unset: as introspection.
    serviceSdl: env('FEDERATION_SDL', flag.optional()),
    // Unset: three quarters of PIM_MAX_CONCURRENCY (the why is where toConfig computes it).
    maxConcurrencyPerCredential: env('PIM_MAX_CONCURRENCY_PER_CREDENTIAL', int(1, 1_024).optional()),
    // Unset: three quarters of HTTP_MAX_IN_FLIGHT, as above.
    maxInFlightPerCredential: env('HTTP_MAX_IN_FLIGHT_PER_CREDENTIAL', int(1, 1_000_000).optional()),
    // Unset: three quarters of PIM_MAX_INFLIGHT_BYTES, as above.
    maxInflightBytesPerCredential: env('PIM_MAX_INFLIGHT_BYTES_PER_CREDENTIAL', int(1_024, 68_719_476_736).optional()),
    pimCache: env('PIM_CACHE', flag.default(true)),
    // The OpenTelemetry SDKs' own: the traces' URL as it is (no /v1/traces added), and a switch for tracing off.
    otlpTracesEndpoint: env(
      'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
      url(/^https?$/, 'an http(s) URL such as http://collector:4318/v1/traces').optional(),
    ),
    // As the SDKs read it (the OpenTelemetry specification's booleans): `true` in any case; anything else is false,
    // and a value other than `false` gets a warning line (loadConfig), not a refusal: the SDKs start with it.
    otelDisabled: env(
      'OTEL_SDK_DISABLED',
      z
        .string()
        .transform((value) => value.trim().toLowerCase() === 'true')
        .default(false),
    ),
    apq: env('GRAPHQL_APQ', flag.default(true)),
    // Whole serialized results of repeated operations, kept while their upstream answers are fresh; 0: off.
    responseCacheBytes: env(
      'RESPONSE_CACHE_MAX_BYTES',
      int(0, 65_536 * MiB).default(32 * MiB),
      wasMiB('RESPONSE_CACHE_MAX_MB'),
    ),
    // Redis for the caches and APQ, shared by replicas; unset: in process.
    redisUrl: env(
      'REDIS_URL',
      url(/^rediss?$/, 'a redis:// or rediss:// URL')
        .refine((value) => !URL.canParse(value) || /^(\/\d*)?$/.test(new URL(value).pathname), {
          error: 'a redis:// or rediss:// URL whose path, if any, is a database number such as /0',
        })
        // The user and password are percent-decoded when the connection is made: a `%` that starts no escape
        // (a generated password) would throw there, past this one-line refusal.
        .refine((value) => decodes(urlOf(value).username) && decodes(urlOf(value).password), {
          error: 'a redis:// or rediss:// URL whose user and password are percent-encoded (a % as %25)',
        })
        // Nothing reads a query (`?password=`, `?tls=true`): the connection would go without it, failing later.
        .refine(noQuery, {
          error:
            'a redis:// or rediss:// URL without a query or fragment (TLS is rediss://, a password redis://:pw@host)',
        })
        .optional(),
    ),
    // Longest wait for one Redis reply before it counts as a miss (or a skipped write); at most half the budget.
    redisTimeoutMs: env('REDIS_TIMEOUT_MS', int(1, 60_000).default(200)),
  },
};

/** The layout with each setting replaced by its parsed value. */
type Parsed<T> = T extends Setting<infer S> ? z.output<S> : { [K in keyof T]: Parsed<T[K]> };

const isSetting = (node: unknown): node is Setting => node instanceof Setting;
const settingsOf = (node: object): Setting[] =>
  Object.values(node).flatMap((child) => (isSetting(child) ? [child] : settingsOf(child)));
const all = settingsOf(layout);
// A name listed twice would read one variable into two options, the second row unnoticed.
if (new Set(all.map((s) => s.name)).size !== all.length) throw new Error('config.ts lists a setting twice');

/** Every environment variable the server reads, by name (the flat view of the layout). */
export const settings = z.object(Object.fromEntries(all.map((s) => [s.name, s.schema])));

/** Each renamed setting's old name, beside the new one; both are read, the new one wins. */
export const renamedSettings = all.flatMap((s) => (s.renamed ? [{ from: s.renamed.from, to: s.name }] : []));

const valuesOf = (node: object, parsed: Record<string, unknown>): unknown =>
  Object.fromEntries(
    Object.entries(node).map(([key, child]) => [key, isSetting(child) ? parsed[child.name] : valuesOf(child, parsed)]),
  );

/** The validated, typed configuration every other module takes as options. */
export type Config = ReturnType<typeof toConfig> & {
  /** For main.ts to log as warnings: one line per renamed setting still set by its old name, or a value read as false. */
  warnings: string[];
};

const secrets = new Set(['CACHE_ADMIN_TOKEN', 'PIM_API_KEY']);

/** Thrown for a bad environment; its message is the one line main.ts prints before exiting. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Reads and validates the environment once; the only module that touches `process.env`. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  // Empty strings (or only whitespace: a templated line) count as unset, the way shells and .env files mean them.
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v.trim() !== ''));
  const { values, deprecations, readFrom } = withNewNames(present);
  const warnings = [...deprecations];
  // The OpenTelemetry specification's reading of its own settings, as the SDKs start with them (never their values).
  const disabled = present['OTEL_SDK_DISABLED']?.trim().toLowerCase();
  if (disabled !== undefined && disabled !== 'true' && disabled !== 'false') {
    warnings.push(
      `OTEL_SDK_DISABLED is read as false (tracing stays on where an endpoint is set): only true turns it off`,
    );
  }
  // A malformed OTEL_RESOURCE_ATTRIBUTES is discarded whole, with an error reported; the process still starts.
  const attributes = values['OTEL_RESOURCE_ATTRIBUTES'];
  if (attributes !== undefined && !resourceAttributes.safeParse(attributes).success) {
    delete values['OTEL_RESOURCE_ATTRIBUTES'];
    warnings.push(`OTEL_RESOURCE_ATTRIBUTES is discarded: expected ${attributesForm}`);
  }
  const parsed = settings.safeParse(values);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const name = String(issue.path[0]);
    const old = readFrom.get(name);
    // A token or key refused is still someone's secret: the line must not print it.
    const shown = secrets.has(name) ? '***' : JSON.stringify(withoutSecrets(values[name]));
    const setting = old ? `${old}=${JSON.stringify(present[old])} (read as ${name}=${shown})` : `${name}=${shown}`;
    throw new ConfigError(`Invalid ${setting}: expected ${issue.message}`);
  }
  const tree = valuesOf(layout, parsed.data) as Parsed<typeof layout>;
  const refusal = unsafeCombination(tree);
  if (refusal) throw new ConfigError(refusal);
  return { ...toConfig(tree), warnings };
}

/**
 * Renamed settings set by their old name, read as the new one in its unit. Each gets one warning
 * line, which names the settings and never their values; when both names are set, the new one wins.
 */
function withNewNames(present: Record<string, string | undefined>) {
  const values = { ...present };
  const deprecations: string[] = [];
  const readFrom = new Map<string, string>();
  for (const { name, renamed } of all) {
    const old = renamed && present[renamed.from];
    if (!renamed || old === undefined) continue;
    if (present[name] !== undefined) {
      deprecations.push(`${renamed.from} is ignored: ${name} is set too and wins; remove ${renamed.from}`);
      continue;
    }
    // A decimal in the old unit (`1.5` s) is a whole number in the new one; anything else is refused as it was set,
    // as is one that would round to 0 (`0.0001` s would turn stale-if-error off).
    const converted = Number(old) * renamed.factor;
    const whole = /^\s*\+?\d+(\.\d+)?\s*$/.test(old) && (converted === 0 || Math.round(converted) > 0);
    values[name] = whole ? String(Math.round(converted)) : old;
    readFrom.set(name, renamed.from);
    deprecations.push(`${renamed.from} is deprecated: set ${name} instead (read now as its value × ${renamed.factor})`);
  }
  return { values, deprecations, readFrom };
}

/**
 * What one credential may hold of `total` (upstream connections, requests in flight, upstream bytes): as set, else three
 * quarters, so one caller may use most of it and a quarter always stays free for the others.
 */
const shareOf = (total: number, set: number | undefined) =>
  Math.min(total, set ?? Math.max(1, Math.floor((total * 3) / 4)));

/**
 * The parsed settings as option groups, plus what is derived from several of them; every group is
 * shaped as the options of the module app.ts hands it to.
 */
function toConfig({ inputs: e, ...groups }: Parsed<typeof layout>) {
  const { pim, persisted, credentials } = groups;
  const introspection = e.introspection ?? e.nodeEnv !== 'production';
  // A Redis miss must leave the request most of its budget for the upstream call it then makes.
  const redisTimeoutMs = Math.max(1, Math.min(e.redisTimeoutMs, Math.floor(groups.request.budgetMs / 2)));
  const redis = { redisUrl: e.redisUrl, redisTimeoutMs };
  return {
    ...groups,
    http: {
      ...groups.http,
      maxInFlightPerCredential: shareOf(groups.http.maxInFlight, e.maxInFlightPerCredential),
      metricsPath: (groups.observability.metricsPort === undefined && groups.observability.metricsPath) || undefined,
    },
    observability: {
      ...groups.observability,
      /** Where spans are sent; undefined turns tracing off. */
      otlpTracesUrl: e.otelDisabled
        ? undefined
        : (e.otlpTracesEndpoint ?? withPath(groups.observability.otlpEndpoint, '/v1/traces')),
    },
    development: e.nodeEnv === 'development',
    /** Serve the bundled demo catalog and call it instead of PIM_BASE_URL: asked for, or nothing else to call. */
    demo: e.demo || !groups.pimBaseUrl,
    pim: {
      ...pim,
      maxConcurrencyPerCredential: shareOf(pim.maxConcurrency, e.maxConcurrencyPerCredential),
      byteLimits: {
        ...pim.byteLimits,
        maxInflightBytesPerCredential: shareOf(pim.byteLimits.maxInflightBytes, e.maxInflightBytesPerCredential),
      },
      // A request's retries, each a lookup, never wait on a silent Redis twice (its budget bounds them all).
      cache: e.pimCache && {
        ...pim.cache,
        maxEntryBytes: pim.maxBodyBytes,
        missAfterFailureMs: groups.request.budgetMs,
        ...redis,
      },
      // Invalidations sent to another instance end freshness here within invalidationPollMs.
      stale: { ...pim.stale, ...redis, invalidationPollMs: 1_000 },
      // The probe's request is built with the limits every request has.
      probe: { limits: groups.request.limits },
    },
    // Trusted documents only refuses every other document, introspection's and so GraphiQL's too.
    security: {
      ...groups.security,
      introspection: introspection && !persisted.only,
      serviceSdl: e.serviceSdl ?? introspection,
    },
    limits: { ...groups.limits, blockSuggestions: !introspection || persisted.only },
    httpCaching: { ...groups.httpCaching, forwardHeaders: credentials.forwardHeaders },
    /** createResponseCache, less the credentials; false when it or the upstream cache (PIM_CACHE) is off. */
    responseCache: e.pimCache &&
      e.responseCacheBytes > 0 && {
        maxBytes: e.responseCacheBytes,
        forwardHeaders: credentials.forwardHeaders,
        surrogateKeyHeader: groups.httpCaching.surrogateKeyHeader,
        batching: groups.batching,
      },
    persisted: {
      ...persisted,
      // A document bigger than a request body could never have been sent.
      apq: e.apq && { ...persisted.apq, maxDocumentBytes: groups.http.maxBodyBytes, ...redis },
    },
  };
}

/** Settings each valid alone whose combination would quietly do what nobody meant. */
function unsafeCombination({ inputs, port, pimBaseUrl, observability, persisted, http, pim }: Parsed<typeof layout>) {
  if (inputs.nodeEnv === 'production' && !pimBaseUrl && !inputs.demo) {
    return 'PIM_BASE_URL is required when NODE_ENV=production (set PIM_DEMO=true to serve the bundled demo catalog)';
  }
  // Port 0 picks a free port for each listener; any other shared one fails the second listen as if another process held it.
  if (observability.metricsPort !== 0 && observability.metricsPort === port) {
    return `METRICS_PORT (${port}) must not be PORT: the metrics listen on a port of their own (unset METRICS_PORT to serve them on PORT)`;
  }
  if (observability.metricsPort !== undefined && observability.metricsPath === false)
    return 'METRICS_PORT is set but METRICS_PATH=off serves no metrics: unset one of the two';
  if (http.headersTimeoutMs > http.requestTimeoutMs) {
    return `HTTP_HEADERS_TIMEOUT_MS (${http.headersTimeoutMs}) must not be above HTTP_REQUEST_TIMEOUT_MS (${http.requestTimeoutMs}): the head is part of the request`;
  }
  // A share past its total would leave nothing free for the others, the very room it is there to keep.
  const shares = [
    ['PIM_MAX_CONCURRENCY', pim.maxConcurrency, inputs.maxConcurrencyPerCredential],
    ['HTTP_MAX_IN_FLIGHT', http.maxInFlight, inputs.maxInFlightPerCredential],
    ['PIM_MAX_INFLIGHT_BYTES', pim.byteLimits.maxInflightBytes, inputs.maxInflightBytesPerCredential],
  ] as const;
  for (const [name, total, share] of shares) {
    if (share !== undefined && share > total) {
      return `${name}_PER_CREDENTIAL (${share}) must not be above ${name} (${total}): it is one credential's share of it`;
    }
  }
  if (persisted.only && !persisted.path)
    return 'PERSISTED_DOCUMENTS_ONLY=true needs PERSISTED_DOCUMENTS_PATH, the manifest of the documents allowed';
  return undefined;
}

// A URL setting may carry a secret (a REDIS_URL password, a token or key someone put in PIM_BASE_URL): the
// error line must not print it.
function withoutSecrets(value: string | undefined): string | undefined {
  // A value padded with blanks or quotes (an env file's) is refused with them shown; what follows them is masked.
  const [, padding, rest] = /^([\s"'`]*)(.*)$/s.exec(value ?? '')!;
  return value === undefined ? undefined : padding! + masked(rest!);
}
function masked(value: string): string {
  return (
    value
      // A password: everything up to the last `@` of the authority (a generated one may hold `/`, `#` or `?`), after
      // a user name that may hold an `@` itself (an e-mail address).
      .replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/]*:).*@/is, '$1***@')
      // A user name alone is likely a token (an `@` in it included).
      .replace(/^([a-z][a-z0-9+.-]*:\/\/)[^:/]+@/i, '$1***@')
      // Any `@` the two above left (no `scheme://` before them: `user:password@host`, `rediss:/user:password@host`;
      // or an authority they cannot read: `redis:///user:password@host`): all up to the last `@`.
      .replace(/^(?![a-z][a-z0-9+.-]*:\/\/(?:[^:/@]*:)?\*\*\*@).*@/is, '***@')
      // The host left out, a password stands where the port goes (`redis://user:password`): anything but a port there
      // (at most 5 digits) with no path or a database number's, and all after it (a generated password may hold `/`,
      // `?` or `#`, which cannot be told from a path or query: `user:42/Ab+c` is no port and path); not a password the
      // rules above already hid (`user:***@host`).
      .replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/@?#]*:)(?!\d{0,5}(?:\/\d*)?(?:[?#]|$)|\*\*\*@).*$/is, '$1***')
      // A query or fragment may hold a key (past a line break too, which URL parsers drop).
      .replace(/([?#]).*$/s, '$1***')
  );
}
