import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.ts';

// bb93fac refuses an OTEL_EXPORTER_OTLP_ENDPOINT with a query, because spans go to `${endpoint}/v1/traces`: after a
// `?` that path is the query. Its check reads URL.search, which is '' for a bare `?`: `http://collector:4318/?` is
// accepted, and spans go to http://collector:4318/?/v1/traces (path `/`), which no collector serves.
describe('a bare ? (an empty query)', () => {
  it.each(['http://collector:4318/?', 'http://collector:4318?', 'http://collector:4318/otlp?'])(
    'OTEL_EXPORTER_OTLP_ENDPOINT=%s is refused, as one with a query is',
    (endpoint) => {
      expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint })).toThrow(ConfigError);
      expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint })).toThrow(
        /^Invalid OTEL_EXPORTER_OTLP_ENDPOINT=/,
      );
    },
  );

  it('where the spans would go: /v1/traces lands in the query', () => {
    const endpoint = 'http://collector:4318/?';
    const url = new URL(`${endpoint.replace(/\/+$/, '')}/v1/traces`); // as src/observability/tracing.ts builds it
    expect(url.pathname).toBe('/');
  });
});
