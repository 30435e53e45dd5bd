import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createServerAdapter } from '@whatwg-node/server';
import { createDemoService } from '../../src/demo/service.ts';

/** A demo REST service on a real loopback port, as `npm start` mounts it. */
export interface DemoServer {
  /** `http://127.0.0.1:<port>`: a base URL for the façade. */
  origin: string;
  /** GETs a path below /pxm/pimapi/v1 and parses the JSON body. */
  get(path: string, init?: RequestInit): Promise<{ status: number; headers: Headers; body: any; text: string }>;
  close(): Promise<void>;
}

/** Starts the demo service on 127.0.0.1, port 0. */
export async function startDemoServer(): Promise<DemoServer> {
  const server = createServer(createServerAdapter(createDemoService()));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const base = `${origin}/pxm/pimapi/v1`;
  return {
    origin,
    async get(path, init) {
      const res = await fetch(base + path, init);
      const text = await res.text();
      return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined, text };
    },
    close: () => new Promise((resolve, reject) => server.close((e) => (e ? reject(e) : resolve()))),
  };
}
