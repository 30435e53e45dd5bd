import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';

/** The header that carries the server's own key (PIM_API_KEY) upstream. */
export const SERVER_KEY_HEADER = 'x-api-key';

export interface UpstreamCredentialsOptions {
  /** Lower-case names of incoming headers passed on to the PIM. */
  forwardHeaders: readonly string[];
  /** Sent as `X-API-KEY` when the caller sent none. */
  apiKey: string | undefined;
}

/** The credential headers of upstream calls: which names identify a caller, and how to build them. */
export interface UpstreamCredentials {
  /** Lower-case header names whose values identify the caller upstream. */
  names: readonly string[];
  /** The header and value of the server's own key (PIM_API_KEY); undefined when none is set. */
  serverKey: { header: string; value: string } | undefined;
  /** The credential headers of one call: the forwarded ones of `incoming`, else the server's key. */
  headers(incoming?: Pick<Headers, 'get'>): Record<string, string>;
  /**
   * The fair-queue partition of a call with these `headers`: a one-way key of the credential the PIM
   * authenticates. That is the `X-API-KEY` sent (the caller's own, else the server's), whatever else was
   * forwarded; a call without one, everything forwarded.
   */
  partition(headers: Readonly<Record<string, string>>): string;
  /**
   * Whom the PIM's 401 to a call with these `headers` refuses, as a one-way key: the caller's own `X-API-KEY`, whatever
   * rode along with it, else everything forwarded. So a caller's token sent beside the server's key (which goes with
   * every call) is judged by itself, and the server's key alone is the server's share (its 401 ends nothing).
   */
  identity(headers: CredentialHeaders): string;
  /** The PIM answered a call with these headers other than 401, 403 or 429: its `identity` is real. */
  accepted(headers: CredentialHeaders): void;
  /** The PIM refused a call with these headers (401): its `identity` no longer counts as real (the server's aside). */
  refused(headers: CredentialHeaders): void;
  /**
   * Epoch ms of the PIM's latest 401 to the `identity` of these credential `headers` (the server's aside), else 0:
   * what the caches hold of it from before is not served (the PIM has said no to it; a cached answer may stay fresh
   * for hours). By the headers: the caches partition by every forwarded one.
   */
  refusedSince(headers: CredentialHeaders): number;
  /**
   * The share a request counts in at the door (HTTP_MAX_IN_FLIGHT_PER_CREDENTIAL): its partition once the PIM has
   * accepted its key, else one share for every key not seen accepted, so made-up keys (each a partition of its
   * own) cannot take every slot with requests that never reach the PIM.
   */
  doorShare(incoming: Pick<Headers, 'get'>): string;
  /**
   * The same share for a call's `partition` (computed already): the byte share a request's upstream bytes and
   * response text count in (PIM_MAX_INFLIGHT_BYTES_PER_CREDENTIAL), so made-up keys cannot hold the process's cap.
   */
  shareOf(partition: string): string;
}

/** A call's credential headers, as a cache keeps them (undici's copy may hold a list). */
export type CredentialHeaders = Readonly<Record<string, string | string[] | undefined>>;

/** The door share of the keys the PIM has not been seen to accept. */
export const UNPROVEN_KEYS = 'unproven keys';

/** The one place that decides which credential headers go upstream; readiness and requests share it. */
export function createUpstreamCredentials({ forwardHeaders, apiKey }: UpstreamCredentialsOptions): UpstreamCredentials {
  const names = apiKey === undefined ? forwardHeaders : [...new Set([...forwardHeaders, SERVER_KEY_HEADER])];
  // The PIM authenticates the X-API-KEY (the caller's, else the server's): other forwarded headers ride along on it,
  // or one real key with a made-up Authorization per request would be as many shares. A call without one (an
  // Authorization-only deployment) is its forwarded headers together.
  const byKey = createCredentialKey([SERVER_KEY_HEADER]);
  const byAll = createCredentialKey(names);
  const partition = names.includes(SERVER_KEY_HEADER)
    ? (sent: CredentialHeaders) => (sent[SERVER_KEY_HEADER] === undefined ? byAll : byKey)(sent)
    : byAll;
  const headers = (incoming?: Pick<Headers, 'get'>) => {
    const sent: Record<string, string> = apiKey === undefined ? {} : { [SERVER_KEY_HEADER]: apiKey };
    for (const name of forwardHeaders) {
      const value = incoming?.get(name);
      // An empty value (GraphiQL's blank X-API-KEY slot) counts as absent, so the server's key applies.
      if (value !== undefined && value !== null && value !== '') sent[name] = value;
    }
    return sent;
  };
  // The server's own key is the operator's: taken as real from the start, so keyless callers always have their share.
  const serverShare = apiKey === undefined ? undefined : partition({ [SERVER_KEY_HEADER]: apiKey });
  // Only partitions the PIM accepted get in; a fresh start re-learns them on first answers. In order of the PIM's
  // last answer: past the bound the key answered longest ago goes, never every key at once (a PIM that checks no
  // X-API-KEY answers a new Authorization per request, each a partition of its own).
  const accepted = new LRUCache<string, true>({ max: MAX_DIGESTS });
  // Callers' own credentials sent beside the server's key that the PIM accepted: apart, so that a token per user never
  // pushes the keys out of the door's list.
  const alongside = new LRUCache<string, true>({ max: MAX_DIGESTS });
  // Of those it had accepted apart from all others: a made-up key holds nothing cached, and its 401s must not push a
  // revoked key's out. Yet a key (or a token) that left its list of accepted ones may still hold cached answers, whose
  // max-age may be hours: its 401 is kept too, with the others'.
  const refusedAt = new LRUCache<string, number>({ max: MAX_DIGESTS });
  const refusedElse = new LRUCache<string, number>({ max: MAX_REFUSED });
  // Where the PIM's word on a call's identity goes: the door's list for a caller's key, else the list beside it.
  const judged = (sent: CredentialHeaders): [LRUCache<string, true>, string] => {
    const share = partition(sent);
    return share === serverShare ? [alongside, byAll(sent)] : [accepted, share];
  };
  // Read as a use: a key served from the caches, whose calls the PIM no longer answers, is in use all the same.
  const shareOf = (share: string) =>
    share === serverShare || accepted.get(share) !== undefined ? share : UNPROVEN_KEYS;
  return {
    names,
    serverKey: apiKey === undefined ? undefined : { header: SERVER_KEY_HEADER, value: apiKey },
    partition,
    headers,
    identity: (sent) => judged(sent)[1],
    accepted(sent) {
      const [list, who] = judged(sent);
      if (who === serverShare) return;
      list.set(who, true);
      // Refused while the PIM was still taking it on (a key being provisioned): what it gets now is cached anew.
      if (refusedElse.size > 0) refusedElse.delete(who);
    },
    refused(sent) {
      const [list, who] = judged(sent);
      if (who === serverShare) return;
      (list.has(who) ? refusedAt : refusedElse).set(who, Date.now());
      list.delete(who);
    },
    refusedSince(sent) {
      if (refusedAt.size + refusedElse.size === 0) return 0;
      const who = judged(sent)[1];
      return Math.max(refusedAt.get(who) ?? 0, refusedElse.get(who) ?? 0);
    },
    doorShare(incoming) {
      return shareOf(partition(headers(incoming)));
    },
    shareOf,
  };
}

/**
 * Creates a function that turns the credential headers of an upstream call into a short,
 * one-way key, so shared state (in-flight calls, cached responses) is partitioned per caller
 * without the raw key ever appearing in a key of that state, a log line or a Redis key.
 *
 * @param names lower-case header names whose values identify the caller
 */
export function createCredentialKey(names: readonly string[]) {
  const sorted = [...new Set(names.map((n) => n.toLowerCase()))].sort();
  // The same credential comes back on every request, and in several new header objects per call (undici's
  // copies, the response cache's own): the digest of material already seen is looked up, not recomputed.
  // The material never leaves this closure.
  const digests = new Map<string, string>();
  let heldChars = 0;
  return (headers: Readonly<Record<string, string | string[] | undefined>>): string => {
    let material = '';
    for (const name of sorted) {
      const value = headers[name];
      if (value !== undefined) material += `${name}\0${String(value)}\0`;
    }
    let key = digests.get(material);
    if (key === undefined) {
      key = material === '' ? 'anonymous' : createHash('sha256').update(material).digest('base64url').slice(0, 22);
      // Bounded in count and characters: made-up credentials (one per request at worst) start it afresh rather than
      // grow it, and one longer than any real token is hashed each time, never held.
      if (material.length > MAX_HELD_CHARS) return key;
      if (digests.size >= MAX_DIGESTS || heldChars + material.length > MAX_DIGEST_CHARS) {
        digests.clear();
        heldChars = 0;
      }
      digests.set(material, key);
      heldChars += material.length;
    }
    return key;
  };
}

// Credentials in use at once on one instance are far fewer. HTTP_MAX_HEADER_BYTES (up to 1 MiB) would bound an entry
// alone, so the characters held are bounded too: at most 1 Mi a map (one byte each for the ASCII of real tokens),
// and material over 16 Ki characters (an identity token is a few thousand) is never held.
const MAX_DIGESTS = 1_024;
// 401s of credentials not on the list of accepted ones, as the last good copies keep them: some 150 bytes each.
const MAX_REFUSED = 10_000;
const MAX_DIGEST_CHARS = 2 ** 20;
const MAX_HELD_CHARS = 2 ** 14;

// Shorter values would match ordinary text in every body; no real credential is that short.
const MIN_SECRET_LENGTH = 6;

/**
 * Creates a function that lists the credential values one call sends, as an upstream might echo
 * them: each whole value, and for `<scheme> <token>` (`Authorization: Bearer …`) the token alone. Not every
 * word of a longer value: a caller's header of 1,900 words made each body of its calls scanned 1,900 times.
 */
export function createCredentialSecrets(names: readonly string[]) {
  return (headers: Readonly<Record<string, string>>): string[] =>
    names.flatMap((name) => {
      const value = headers[name];
      if (value === undefined) return [];
      const parts = value.trim().split(/\s+/);
      return (parts.length === 2 ? [value, parts[1]!] : [value]).filter((secret) => secret.length >= MIN_SECRET_LENGTH);
    });
}
