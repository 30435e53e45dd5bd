import { createHash } from 'node:crypto';

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
