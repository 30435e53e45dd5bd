import { afterAll, beforeAll, beforeEach } from 'vitest';
import { createApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { startUpstream, type Upstream } from './upstream.ts';

export interface GraphQLResponse {
  errors?: Array<{ message: string; path?: string[]; extensions?: Record<string, any> }>;
  data?: Record<string, any> | null;
}

/** Builds the real app against `baseUrl` with the given environment, called in-process via yoga.fetch. */
export function createTestApp(baseUrl: string, env: Record<string, string> = {}) {
  const config = loadConfig({ PIM_BASE_URL: baseUrl, ...env });
  const app = createApp({ ...config, pimBaseUrl: baseUrl });
  return {
    ...app,
    /** POSTs one operation and returns the HTTP status and parsed body. */
    async query(query: string, variables?: Record<string, unknown>, headers: Record<string, string> = {}) {
      const response = await app.yoga.fetch('http://localhost/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ query, variables }),
      });
      return { status: response.status, body: (await response.json()) as GraphQLResponse };
    },
  };
}

export type TestApp = ReturnType<typeof createTestApp>;

/**
 * Registers vitest hooks that start a recording upstream and an app against it for the file,
 * and clear the recording before each test. Read `upstream` and `app` inside tests.
 */
export function useUpstreamApp(env: Record<string, string> = {}) {
  const fixture = {} as { upstream: Upstream; app: TestApp };
  beforeAll(async () => {
    fixture.upstream = await startUpstream();
    fixture.app = createTestApp(fixture.upstream.url, env);
  });
  beforeEach(() => fixture.upstream.reset());
  afterAll(async () => {
    await fixture.app.close();
    await fixture.upstream.close();
  });
  return fixture;
}
