import type { Redis } from 'ioredis';

/** A Redis connection (made with `createRedis`) and the bound every command on it waits under. */
export interface SharedRedis {
  redis: Redis;
  /** Runs one command, rejecting when its reply is later than the bound (see `replyWithin`). */
  within: <T>(command: () => Promise<T>) => Promise<T>;
}
