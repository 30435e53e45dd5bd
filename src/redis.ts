import {
  circuitBreaker,
  ConsecutiveBreaker,
  handleWhen,
  TaskCancelledError,
  timeout,
  TimeoutStrategy,
  wrap,
} from 'cockatiel';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis, ReplyError, type RedisOptions } from 'ioredis';

// Silence, while replies are owed, after which a connection is taken for dead.
const SILENT_MS = 5_000;

/**
 * Connection options for a `redis://` or `rediss://` URL (user, password, database number, TLS),
 * shared by every part of the service that keeps state in Redis. Keys are prefixed `pim-graphql:`.
 */
function redisOptions(url: string, replyTimeoutMs: number): RedisOptions {
  const { hostname, port, username, password, pathname, protocol } = new URL(url);
  return {
    // An IPv6 literal is spelt in brackets in a URL, without them in an address.
    host: hostname.replace(/^\[(.*)\]$/, '$1'),
    port: Number(port || 6379),
    ...(username ? { username: decodeURIComponent(username) } : {}),
    ...(password ? { password: decodeURIComponent(password) } : {}),
    db: Number(pathname.slice(1) || 0),
    ...(protocol === 'rediss:' ? { tls: {} } : {}),
    keyPrefix: 'pim-graphql:',
    // While Redis is away every command fails at once (callers treat that as a miss) instead of
    // queueing behind reconnects until the upstream deadline passes.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 1_000,
    retryStrategy: (attempt: number) => Math.min(attempt * 250, 5_000),
    // A connection that has said nothing for this long while replies are owed is dropped and made anew: a Redis
    // lost with its node, or one failed over behind the same address, breaks no connection, and the commands bound
    // by `replyWithin` would otherwise wait on its dead socket until the kernel gives up (some 15 minutes).
    socketTimeout: Math.max(SILENT_MS, 2 * replyTimeoutMs),
  };
}

/**
 * Opens a connection with {@link redisOptions}; `replyTimeoutMs` is the bound {@link replyWithin} puts on each reply.
 * Connection failures go to `onError` (ioredis retries on its own); without a listener they would be unhandled
 * `error` events.
 */
export function createRedis(url: string, onError: (error: Error) => void, replyTimeoutMs: number): Redis {
  const options = redisOptions(url, replyTimeoutMs);
  let checkedAt = -Infinity;
  const redis: Redis = new Redis({
    ...options,
    // A failover behind one address (a managed Redis's primary endpoint, Sentinel behind a DNS name, a Service) demotes
    // the old primary, which keeps its connections open and answers every write READONLY for as long as they last:
    // every purge failed with 503, and nothing was stored in Redis again, until a restart. A new connection to the
    // address is asked whether it reaches a primary while this one's node is a replica; only then is this one made
    // anew (commands go on while it looks; during the reconnection they fail fast, as misses and skipped writes).
    // A REDIS_URL naming a replica, or a failover the address does not follow yet, costs one look per SILENT_MS.
    reconnectOnError: (error) => {
      if (/\bREADONLY\b/.test(error.message) && Date.now() - checkedAt >= SILENT_MS) {
        checkedAt = Date.now();
        void primaryElsewhere(redis, options, replyTimeoutMs, onError).then(
          (moved) => moved && redis.status === 'ready' && redis.disconnect(true),
        );
      }
      return false;
    },
  });
  redis.on('error', onError);
  // A database number the server lacks fails ioredis's SELECT, which it reports and then goes on from, connected to
  // database 0: another environment's caches. The connection is dropped before it is ready (the reply comes first),
  // and tried again as one lost, so the stores find Redis away, as the log says, until the server has the database.
  redis.on('error', (error) => {
    if (/\bDB index is out of range\b|\binvalid DB index\b/i.test(error.message)) redis.disconnect(true);
  });
  return redis;
}

/**
 * Whether a new connection with `options` reaches a primary while `connection`'s node is no longer one: a node
 * demoted and promoted again in place, or an address that still leads to the demoted node, is no reason to leave it.
 * A reply refusing the question (an ACL without `HELLO`) goes to `onError`: the connection then stays.
 */
async function primaryElsewhere(
  connection: Redis,
  options: RedisOptions,
  replyTimeoutMs: number,
  onError: (error: Error) => void,
): Promise<boolean> {
  const look = new Redis({ ...options, enableOfflineQueue: true, retryStrategy: () => null });
  look.on('error', () => undefined);
  try {
    const there = await roleOf(look, options.connectTimeout! + replyTimeoutMs, onError);
    return there === 'master' && (await roleOf(connection, replyTimeoutMs, onError)) === 'replica';
  } finally {
    look.disconnect();
  }
}

/** The role (`master`, `replica`) of the node a connection reaches, from `HELLO 2`; undefined if not said within `ms`. */
async function roleOf(connection: Redis, ms: number, onError: (error: Error) => void): Promise<string | undefined> {
  const asked = connection.call('HELLO', '2').catch((error: Error) => {
    if (error instanceof (ReplyError as typeof Error)) onError(error);
  });
  const reply = await Promise.race([asked, sleep(ms, undefined, { ref: false })]);
  if (!Array.isArray(reply)) return undefined;
  const at = reply.indexOf('role');
  return at >= 0 ? String(reply[at + 1]) : undefined;
}

// How long a closing connection waits for Redis to answer QUIT (and the replies before it).
const QUIT_MS = 1_000;

/**
 * Closes gracefully when connected (pending replies arrive), at once when Redis is away. A Redis that is
 * frozen (stopped, or behind a partition that drops packets) never answers QUIT: its connection is dropped
 * after QUIT_MS all the same, or a shutdown would wait on it for ever.
 */
export async function closeRedis(redis: Redis): Promise<void> {
  if (redis.status === 'ready') {
    await Promise.race([redis.quit().catch(() => undefined), sleep(QUIT_MS, undefined, { ref: false })]);
  }
  redis.disconnect();
}

/** Wraps `report` so it is told at most once per `intervalMs`: Redis being away fails every command. */
export function throttled<T = Error>(report: (error: T) => void, intervalMs: number): (error: T) => void {
  let reportedAt = -Infinity;
  return (error) => {
    if (Date.now() - reportedAt < intervalMs) return;
    reportedAt = Date.now();
    report(error);
  };
}

// Consecutive failed commands after which Redis is left alone for a while, and for how long: a
// frozen Redis then costs requests nothing, and writes stop piling up behind its silent socket.
const PAUSE_AFTER_FAILURES = 5;
const PAUSE_MS = 1_000;

// Only a Redis that is away or silent is left alone. One that answers with an error (READONLY after a failover,
// OOM under noeviction) answers at once: its refused writes must not stop the reads it still serves.
const awayOrSilent = handleWhen((error) => !(error instanceof (ReplyError as typeof Error)));

/** Whether a command {@link replyWithin} bounds failed by waiting out its bound (not at once). */
export const waitedOut = (error: unknown) => error instanceof TaskCancelledError;

/**
 * Bounds the wait for each reply to `ms`: a Redis that is connected but silent (busy, stopped, a
 * partition dropping packets) breaks no connection, so without a bound every caller waits on it.
 * Past the bound the command rejects (a miss, a skipped write); a late reply is ignored. After a few
 * failures in a row (timeouts, lost connections) commands fail at once for a second, then one is tried again. Only our own
 * commands are bound, not ioredis' handshake: a slow Redis keeps its connection, which is remade only after a silence
 * far longer than a reply's bound (`socketTimeout` in {@link redisOptions}).
 */
export function replyWithin(ms: number): <T>(command: () => Promise<T>) => Promise<T> {
  const policy = wrap(
    circuitBreaker(awayOrSilent, { halfOpenAfter: PAUSE_MS, breaker: new ConsecutiveBreaker(PAUSE_AFTER_FAILURES) }),
    // Nothing reads the signal (ioredis takes none): aborting it after each reply built a DOMException a command.
    timeout(ms, { strategy: TimeoutStrategy.Aggressive, abortOnReturn: false }),
  );
  return (command) => policy.execute(() => command());
}
