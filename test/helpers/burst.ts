/** One operation of `count` aliased fields, each a distinct upstream call whose id starts with `prefix`. */
export const aliasedCalls = (prefix: string, count: number) =>
  `{ ${Array.from({ length: count }, (_, i) => `f${i}: classificationGroups(classificationId: "${prefix}-${i}")`).join(' ')} }`;

export interface TimedAnswer {
  /** Time from sending the request to reading its whole body. */
  ms: number;
  body: { data?: Record<string, unknown>; errors?: Array<{ message: string; extensions: { code: string } }> };
}

/** POSTs one query to the façade at `origin` and times the answer, for the fairness tests. */
export async function postTimed(
  origin: string,
  query: string,
  headers: Record<string, string> = {},
  signal?: AbortSignal,
): Promise<TimedAnswer> {
  const started = Date.now();
  const response = await fetch(`${origin}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ query }),
    signal,
  });
  const body = (await response.json()) as TimedAnswer['body'];
  return { ms: Date.now() - started, body };
}
