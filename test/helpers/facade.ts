import type { AddressInfo } from 'node:net';
import { createApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { createServer, type FacadeServer } from '../../src/http/server.ts';

/** The real app behind the real node:http server (src/http/server.ts) on 127.0.0.1:0. */
export async function startFacade(baseUrl: string, env: Record<string, string> = {}) {
  const config = loadConfig({ PIM_BASE_URL: baseUrl, ...env });
  const app = createApp({ ...config, pimBaseUrl: baseUrl });
  const server: FacadeServer = createServer(app, config.http);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  return {
    app,
    server,
    url,
    port,
    /** POSTs one operation to /graphql and returns the status and parsed body. */
    async post(query: string, variables?: Record<string, unknown>, headers: Record<string, string> = {}) {
      const response = await fetch(`${url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ query, variables }),
      });
      const text = await response.text();
      return { status: response.status, text, body: safeJson(text) };
    },
    close: () => server.shutdown(),
  };
}

export type Facade = Awaited<ReturnType<typeof startFacade>>;

function safeJson(text: string): any {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
