import { createHash } from 'node:crypto';

/** The header that carries the server's own key (PIM_API_KEY) upstream. */
const SERVER_KEY_HEADER = 'x-api-key';

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
  /** The credential headers of one call: the forwarded ones of `incoming`, else the server's key. */
  headers(incoming?: Headers): Record<string, string>;
}

/** The one place that decides which credential headers go upstream; readiness and requests share it. */
export function createUpstreamCredentials({ forwardHeaders, apiKey }: UpstreamCredentialsOptions): UpstreamCredentials {
  const names = apiKey === undefined ? forwardHeaders : [...new Set([...forwardHeaders, SERVER_KEY_HEADER])];
  return {
    names,
    headers(incoming) {
      const headers: Record<string, string> = apiKey === undefined ? {} : { [SERVER_KEY_HEADER]: apiKey };
      for (const name of forwardHeaders) {
        const value = incoming?.get(name);
        // An empty value (GraphiQL's blank X-API-KEY slot) counts as absent, so the server's key applies.
        if (value !== undefined && value !== null && value !== '') headers[name] = value;
      }
      return headers;
    },
  };
}

/**
 * Creates a function that turns the credential headers of an upstream call into a short,
 * one-way key, so shared state (in-flight calls, cached responses) is partitioned per caller
 * without the raw key ever appearing in a map, a log line or a Redis key.
 *
 * @param names lower-case header names whose values identify the caller
 */
export function createCredentialKey(names: readonly string[]) {
  const sorted = [...new Set(names.map((n) => n.toLowerCase()))].sort();
  // Header objects are created once per GraphQL request, so each is hashed once.
  const memo = new WeakMap<object, string>();
  return (headers: Readonly<Record<string, string | string[] | undefined>>): string => {
    let key = memo.get(headers);
    if (key !== undefined) return key;
    let material = '';
    for (const name of sorted) {
      const value = headers[name];
      if (value !== undefined) material += `${name}\0${String(value)}\0`;
    }
    key = material === '' ? 'anonymous' : createHash('sha256').update(material).digest('base64url').slice(0, 22);
    memo.set(headers, key);
    return key;
  };
}
