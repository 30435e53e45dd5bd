import type { Plugin } from 'graphql-yoga';
import type { Config } from '../src/config.ts';
import { createMetrics } from '../src/observability/metrics.ts';
import { useAbuseLimits } from '../src/plugins/limits.ts';
import { useMetrics } from '../src/observability/plugins/metrics.ts';
import { createOperationLabel } from '../src/plugins/operation.ts';
import { useSecurity } from '../src/plugins/security.ts';

/** The façade's plugins that no setting turns off; the bill prices each on the floor. */
export type PricedPlugin = 'metrics' | 'limits' | 'security';

/** Builds the named plugins with the options `createApp` gives them for `config`. */
export function pricedPlugins(names: readonly PricedPlugin[], config: Config): Plugin[] {
  const make: Record<PricedPlugin, () => Plugin> = {
    metrics: () =>
      useMetrics({
        metrics: createMetrics(),
        path: config.observability.metricsPath,
        label: createOperationLabel(undefined),
      }),
    limits: () => useAbuseLimits(config.limits),
    security: () => useSecurity(config.security),
  };
  return names.map((name) => make[name]());
}
