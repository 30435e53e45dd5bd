import { PimError } from './errors.ts';

/** Upstream bytes one GraphQL request has read; each call's body is charged as it is read. */
export interface ByteAccount {
  /** Counts `bytes` more, or throws UPSTREAM_TOO_LARGE (with `status`) past either cap. */
  charge(bytes: number, status: number): void;
  /** Gives back bytes of a body that was dropped before it was handed on. */
  refund(bytes: number): void;
  /** The request's response is done: its bytes no longer count toward the process cap. */
  release(): void;
}

export interface ByteLimitsOptions {
  /** Upstream bytes one GraphQL request may read in all. */
  maxRequestBytes: number;
  /** Upstream bytes the process may hold at once, over every request not yet answered. */
  maxInflightBytes: number;
}

/**
 * Bounds the memory upstream answers can take: per request, and over all requests at once. Bytes
 * count from the moment they are read until the request's response is done, because the parsed
 * bodies live that long, not just until they are parsed.
 */
export function createByteLimits({ maxRequestBytes, maxInflightBytes }: ByteLimitsOptions) {
  let held = 0;
  return {
    /** Opens the account of one GraphQL request. */
    open(): ByteAccount {
      let used = 0;
      let open = true;
      return {
        charge(bytes, status) {
          if (used + bytes > maxRequestBytes) {
            throw new PimError(
              'UPSTREAM_TOO_LARGE',
              `The catalog answers of this request exceed ${maxRequestBytes} bytes`,
              status,
            );
          }
          if (open && held + bytes > maxInflightBytes) {
            throw new PimError(
              'UPSTREAM_TOO_LARGE',
              'The server holds too much catalog data right now; retry later',
              status,
            );
          }
          used += bytes;
          // Charged after the release, they could never be given back: only the request's own cap applies.
          if (open) held += bytes;
        },
        refund(bytes) {
          used -= bytes;
          if (open) held -= bytes;
        },
        release() {
          if (open) held -= used;
          open = false;
        },
      };
    },
  };
}
