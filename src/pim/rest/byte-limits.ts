import { PimError } from './errors.ts';

/** Upstream bytes one GraphQL request has read; each call's body is charged from its headers (readLimitedText). */
export interface ByteAccount {
  /**
   * Counts `bytes` more of a body of which `body` bytes have come so far, or throws UPSTREAM_TOO_LARGE (with
   * `status`) past any cap.
   */
  charge(bytes: number, status: number, body?: number): void;
  /** Gives back bytes of a body that was dropped before it was handed on. */
  refund(bytes: number): void;
  /**
   * Counts an answer of `size` the response sends (each field that returns it, however it was got), or
   * throws UPSTREAM_TOO_LARGE when the response would send more than a request may read: one answer
   * repeated by aliases or entity representations costs one call and one read, but is written each time.
   */
  send(size: number): void;
  /**
   * Counts `bytes` more of the response's own text as it is serialized (what the client chose to have repeated
   * included: aliases and @defer/@stream labels, once per entity representation), or throws UPSTREAM_TOO_LARGE past
   * a cap. The answers counted by `send` are in that text: the request holds the larger of the two.
   */
  wrote(bytes: number): void;
  /**
   * The request's response is done: its bytes no longer count toward the process cap or its credential's share,
   * but for a body still being read into it (see {@link reading}).
   */
  release(): void;
  /**
   * A body starts (`true`) or ends (`false`) being read into this account. Until it ends, it counts though the
   * account is released: a coalesced call reads into the account of the request that started it, and goes on for
   * the requests that joined it when that one's client has left, its body still read into memory.
   */
  reading(started: boolean): void;
}

export interface ByteLimitsOptions {
  /** Upstream bytes one GraphQL request may read in all. */
  maxRequestBytes: number;
  /** Upstream bytes the process may hold at once, over every request not yet answered. */
  maxInflightBytes: number;
  /** Of those, what the requests of one credential may hold together. */
  maxInflightBytesPerCredential: number;
}

// A refusal of the request's own limits: `requestLimit` when it is the request's other reads that pass them (a shared
// call refused so is read again for the others), not when the body alone would.
const mine = (others: boolean, message: string, status?: number) =>
  Object.assign(new PimError('UPSTREAM_TOO_LARGE', message, status), { requestLimit: others });

const tooMuch = (who: string, status?: number) =>
  new PimError('UPSTREAM_TOO_LARGE', `${who} too much catalog data right now; retry later`, status);

/**
 * Bounds the memory upstream answers can take: per request, per credential and over all requests at once
 * (a credential's share leaves the others room, though its clients read their answers slowly). Bytes
 * count from the moment they are read until the request's response is done, because the parsed
 * bodies live that long, not just until they are parsed. A response that sends more than its
 * request read (an answer repeated, or served from a cache) holds what it sends: the process counts
 * the larger of the two for each request.
 */
export function createByteLimits({
  maxRequestBytes,
  maxInflightBytes,
  maxInflightBytesPerCredential,
}: ByteLimitsOptions) {
  let held = 0;
  // What one credential leaves free (the last quarter by default), as at the door: a credential beside one holding its
  // whole share (the share of keys not yet seen accepted, which made-up keys fill, is one) may take only half of it
  // there, so whoever holds little still gets some.
  const reserve = Math.max(0, maxInflightBytes - maxInflightBytesPerCredential);
  const reserveShare = Math.floor(reserve / 2);
  // What each credential's open requests hold; a credential holding nothing has no entry.
  const heldBy = new Map<string, number>();
  const setHeld = (credential: string, bytes: number) =>
    bytes > 0 ? heldBy.set(credential, bytes) : heldBy.delete(credential);
  return {
    /** Opens the account of one GraphQL request of `credential` (its partition). */
    open(credential: string): ByteAccount {
      let used = 0;
      let sent = 0;
      let written = 0;
      // What this request adds to `held` while it counts: the larger of `used` and `sent`; once it stopped counting
      // (its response is done, nothing it sent is held any more), the bytes read since.
      let counted = 0;
      let usedAtStop: number | undefined;
      let released = false;
      let reads = 0;
      // `body`: the bytes so far of the body being charged; a body too large alone is no verdict on this request.
      const hold = (nextUsed: number, nextSent: number, status?: number, body = 0) => {
        if (released && reads === 0) return;
        const next = usedAtStop === undefined ? Math.max(nextUsed, nextSent) : nextUsed - usedAtStop;
        const more = next - counted;
        const own = heldBy.get(credential) ?? 0;
        // A request alone past its credential's share would fail however often it were retried: said first.
        if (more > 0 && next > maxInflightBytesPerCredential) {
          const message = `The catalog answers of this request exceed ${maxInflightBytesPerCredential} bytes, the most its credential's requests may hold at once`;
          throw mine(body <= maxInflightBytesPerCredential, message, status);
        }
        if (more > 0 && held + more > maxInflightBytes) throw tooMuch('The server holds', status);
        if (more > 0 && reserve > 0 && held + more > maxInflightBytesPerCredential && own + more > reserveShare) {
          throw tooMuch('The server holds', status);
        }
        if (more > 0 && own + more > maxInflightBytesPerCredential) {
          throw tooMuch('The requests of this credential hold', status);
        }
        held += more;
        setHeld(credential, own + more);
        counted = next;
      };
      const stopCounting = () => {
        held -= counted;
        setHeld(credential, (heldBy.get(credential) ?? 0) - counted);
        usedAtStop = used;
        counted = 0;
      };
      return {
        charge(bytes, status, body = bytes) {
          if (used + bytes > maxRequestBytes) {
            const message = `The catalog answers of this request exceed ${maxRequestBytes} bytes`;
            throw mine(body <= maxRequestBytes, message, status);
          }
          hold(used + bytes, sent, status, body);
          used += bytes;
        },
        refund(bytes) {
          used -= bytes;
          // Given back once the account stopped counting (they left `held` then): later reads count from here.
          if (released && reads === 0 && usedAtStop !== undefined) usedAtStop -= bytes;
          hold(used, sent);
        },
        release() {
          if (!released && reads === 0) stopCounting();
          released = true;
        },
        reading(started) {
          reads += started ? 1 : -1;
          if (!started && released && reads === 0) stopCounting();
        },
        send(size) {
          if (sent + size > maxRequestBytes) {
            throw new PimError(
              'UPSTREAM_TOO_LARGE',
              `The catalog data this response would send exceeds ${maxRequestBytes} bytes; ask for fewer or smaller pages`,
            );
          }
          hold(used, sent + size);
          sent += size;
        },
        wrote(bytes) {
          const total = written + bytes;
          if (total > maxRequestBytes) {
            throw new PimError(
              'UPSTREAM_TOO_LARGE',
              `This response would send more than ${maxRequestBytes} bytes; ask for fewer fields, aliases or entities`,
            );
          }
          if (total > sent) {
            hold(used, total);
            sent = total;
          }
          written = total;
        },
      };
    },
  };
}
