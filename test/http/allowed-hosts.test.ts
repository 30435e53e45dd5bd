import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { useFacade } from '../helpers/facade.ts';
import { rawExchange } from '../helpers/raw-http.ts';

// DNS rebinding: a page on evil.example rebinds its name to the address of a façade that holds the server's key
// (PIM_API_KEY) and reads the catalog through the visitor's browser, same-origin, Host: evil.example. With
// HTTP_ALLOWED_HOSTS a Host naming anyone else is refused before anything runs (421 MISDIRECTED_REQUEST); an address
// and localhost, which no DNS answer stands behind, always pass (the probes ask by the pod's address).
const query = '/graphql?query=%7BcatalogProducts(catalogId%3A%22C1%22)%7D';

async function ask(port: number, host: string, target = query): Promise<{ status: number; text: string }> {
  const text = await rawExchange(port, `GET ${target} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
  return { status: Number(text.slice(9, 12)), text };
}

describe('HTTP_ALLOWED_HOSTS set', () => {
  const fixture = useFacade({ HTTP_ALLOWED_HOSTS: 'catalog.example.com, *.shop.example' });

  it.each(['evil.example', 'evil.example:4000', 'shop.example', 'catalog.example.com.evil.example', 'xn--catalog'])(
    'Host %s gets 421 MISDIRECTED_REQUEST, and the PIM is not called',
    async (host) => {
      const answer = await ask(fixture.facade.port, host);
      expect(answer.status).toBe(421);
      expect(answer.text).toMatch(/\r\ncontent-type: application\/json/i);
      expect(answer.text).toContain('"code":"MISDIRECTED_REQUEST"');
      expect(fixture.upstream.requests).toHaveLength(0);
    },
  );

  it.each([
    'catalog.example.com',
    'CATALOG.Example.com:443',
    'catalog.example.com.',
    'a.shop.example',
    'a.b.shop.example:8443',
    '127.0.0.1',
    '127.0.0.1:4000',
    '[::1]:4000',
    '10.1.2.3:4000',
    'localhost:4000',
    'app.localhost',
  ])('Host %s is served', async (host) => {
    const answer = await ask(fixture.facade.port, host);
    expect(answer.status).toBe(200);
    expect(fixture.upstream.requests).toHaveLength(1);
  });

  it('an absolute-form target is judged by its own host, which stands in for Host', async () => {
    const refused = await ask(fixture.facade.port, 'catalog.example.com', `http://evil.example${query}`);
    expect(refused.status).toBe(421);
    const served = await ask(fixture.facade.port, 'evil.example', `http://catalog.example.com${query}`);
    expect(served.status).toBe(200);
  });

  it('the refusal is counted with the server’s own', async () => {
    await ask(fixture.facade.port, 'evil.example');
    const metrics = await fixture.facade.get('/metrics');
    expect(metrics.text).toMatch(/http_requests_refused_total\{status="421"\} [1-9]/);
  });
});

describe('HTTP_ALLOWED_HOSTS unset (the default)', () => {
  const fixture = useFacade();

  it('any valid Host is served, as before', async () => {
    expect((await ask(fixture.facade.port, 'evil.example')).status).toBe(200);
  });
});

it.each(['catalog.example.com:443', 'https://catalog.example.com', '*', 'catalog.example.com/x'])(
  'HTTP_ALLOWED_HOSTS=%s stops the start naming the setting',
  (value) => {
    expect(() => loadConfig({ HTTP_ALLOWED_HOSTS: value })).toThrow(ConfigError);
    expect(() => loadConfig({ HTTP_ALLOWED_HOSTS: value })).toThrow(/HTTP_ALLOWED_HOSTS/);
  },
);
