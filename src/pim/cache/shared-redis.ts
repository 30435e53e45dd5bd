import type { Redis } from 'ioredis';

/** A Redis connection (made with `createRedis`) and the bound every command on it waits under. */
export interface SharedRedis {
  redis: Redis;
  /** Runs one command, rejecting when its reply is later than the bound (see `replyWithin`). */
  within: <T>(command: () => Promise<T>) => Promise<T>;
  /**
   * Whether Redis answered lately: false for a second after a command failed for want of a reply (away, silent, its
   * breaker open). A second look that is worth one more wait only when Redis answers is skipped then. Absent: true.
   */
  answering?: () => boolean;
}
