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
 * Every setting the server reads from the environment, with its default.
 * The README's configuration table mirrors this object; keep the two in step.
 */
const schema = z.object({
  PORT: int(0, 65535).default(4000),
  HOST: z.string().min(1).optional(),
  NODE_ENV: z.string().default('development'),
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
  PIM_FORWARD_HEADERS: list.default(['x-api-key', 'authorization']),
  PIM_CONNECT_TIMEOUT_MS: int(1, 60_000).default(2_000),
  PIM_TIMEOUT_MS: int(1, 120_000).default(10_000),
  PIM_MAX_CONCURRENCY: int(1, 1_024).default(16),
  MAX_PAGE_SIZE: int(1, 100_000).default(200),
  MAX_ID_LENGTH: int(1, 4_096).default(128),
  GRAPHQL_BATCHING: flag.default(false),
  PIM_COALESCE: flag.default(true),
  PIM_CACHE: flag.default(true),
  PIM_CACHE_TTL_MS: int(0, 86_400_000).default(0),
  PIM_CACHE_MAX_MB: int(1, 65_536).default(64),
  REDIS_URL: z.url({ protocol: /^rediss?$/, error: 'a redis:// or rediss:// URL' }).optional(),
});

type Env = z.output<typeof schema>;

/** The validated, typed configuration every other module takes as options. */
export interface Config {
  port: number;
  /** Undefined listens on all interfaces, like `node:http` does by default. */
  host: string | undefined;
  production: boolean;
  logLevel: Env['LOG_LEVEL'];
  /** The part of the service URL before `/pxm`; undefined serves the bundled demo catalog. */
  pimBaseUrl: string | undefined;
  pimApiKey: string | undefined;
  /** Lower-case names of incoming headers passed on to the PIM. */
  forwardHeaders: string[];
  connectTimeoutMs: number;
  requestTimeoutMs: number;
  maxConcurrency: number;
  maxPageSize: number;
  maxIdLength: number;
  batching: boolean;
  /** Share identical in-flight upstream GETs of one credential. */
  coalesce: boolean;
  /** HTTP cache of upstream answers; false when PIM_CACHE is off. */
  cache: { defaultTtlMs: number; maxBytes: number; redisUrl: string | undefined } | false;
}

/** Thrown for a bad environment; its message is the one line main.ts prints before exiting. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Reads and validates the environment once; the only module that touches `process.env`. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  // Empty strings count as unset, the way shells and .env files usually mean them.
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = schema.safeParse(present);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const name = String(issue.path[0]);
    throw new ConfigError(`Invalid ${name}=${JSON.stringify(present[name])}: expected ${issue.message}`);
  }
  const e = parsed.data;
  return {
    port: e.PORT,
    host: e.HOST,
    production: e.NODE_ENV === 'production',
    logLevel: e.LOG_LEVEL,
    pimBaseUrl: e.PIM_BASE_URL,
    pimApiKey: e.PIM_API_KEY,
    forwardHeaders: e.PIM_FORWARD_HEADERS,
    connectTimeoutMs: e.PIM_CONNECT_TIMEOUT_MS,
    requestTimeoutMs: e.PIM_TIMEOUT_MS,
    maxConcurrency: e.PIM_MAX_CONCURRENCY,
    maxPageSize: e.MAX_PAGE_SIZE,
    maxIdLength: e.MAX_ID_LENGTH,
    batching: e.GRAPHQL_BATCHING,
    coalesce: e.PIM_COALESCE,
    cache: e.PIM_CACHE && {
      defaultTtlMs: e.PIM_CACHE_TTL_MS,
      maxBytes: e.PIM_CACHE_MAX_MB * 2 ** 20,
      redisUrl: e.REDIS_URL,
    },
  };
}
