import { circuitBreaker, ConsecutiveBreaker, handleWhen, timeout, TimeoutStrategy, wrap } from 'cockatiel';
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
  const redis = new Redis(redisOptions(url, replyTimeoutMs));
  redis.on('error', onError);
  return redis;
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
export function throttled(report: (error: Error) => void, intervalMs: number): (error: Error) => void {
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
    timeout(ms, TimeoutStrategy.Aggressive),
  );
  return (command) => policy.execute(() => command());
}
