import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor';
import type { Plugin } from 'graphql-yoga';
import { createCostRule, type CostOptions } from './cost.ts';

/** Limits on the shape of one operation; every one is on by default. */
export interface AbuseLimits extends CostOptions {
  /** Field nesting, fragments flattened; introspection not counted. @default 10 */
  maxDepth?: number;
  /** @default 15 */
  maxAliases?: number;
  /** Lexer tokens of the whole document, checked while parsing. @default 1000 */
  maxTokens?: number;
  /** @default 50 */
  maxDirectives?: number;
  /** Hide "Did you mean ..." suggestions, which would name fields. @default true */
  blockSuggestions?: boolean;
}

/**
 * Refuses hostile operations before they run: GraphQL Armor for depth, aliases, tokens and
 * directives (each a 400 with code BAD_USER_INPUT), plus our own cost rule for upstream calls.
 * The cap on distinct upstream calls per request lives with the loaders, where calls are known.
 */
export function useAbuseLimits({
  maxDepth = 10,
  maxAliases = 15,
  maxTokens = 1_000,
  maxDirectives = 50,
  blockSuggestions = true,
  ...cost
}: AbuseLimits = {}): Plugin {
  const costRule = createCostRule(cost);
  return {
    onPluginInit({ addPlugin }) {
      addPlugin(
        EnvelopArmorPlugin({
          maxDepth: { n: maxDepth, flattenFragments: true, exposeLimits: true },
          maxAliases: { n: maxAliases, exposeLimits: true },
          maxTokens: { n: maxTokens, exposeLimits: true },
          maxDirectives: { n: maxDirectives, exposeLimits: true },
          // Shape-only cost would count upstream fields as scalars; the rule below weighs them.
          costLimit: { enabled: false },
          blockFieldSuggestion: { enabled: blockSuggestions },
        }),
      );
    },
    onValidate({ addValidationRule }) {
      addValidationRule(costRule);
    },
  };
}
