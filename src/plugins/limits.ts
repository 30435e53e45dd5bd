import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor';
import {
  BREAK,
  getNamedType,
  getOperationAST,
  GraphQLError,
  Kind,
  typeFromAST,
  visit,
  type DirectiveNode,
  type DocumentNode,
  type ExecutionResult,
  type FragmentDefinitionNode,
  type SelectionSetNode,
  type ValidationContext,
  type ValueNode,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { createCostRule, keepRefusalStatus, refusal, type CostOptions } from './cost.ts';
import { nestingRule } from './nesting.ts';
import { batchMarks } from './request-slot.ts';

/**
 * Armor's rejections carry no code and would be 200s under `application/json`; each becomes a
 * 400 with GRAPHQL_VALIDATION_FAILED (or GRAPHQL_PARSE_FAILED for the token limit, checked while
 * parsing, where there is no validation context to report to and throwing is the only way out).
 */
function reject(context: ValidationContext | null, error: GraphQLError): void {
  const message = error.message.replace(/^Syntax Error: /, '');
  if (!context) throw refusal(message, 'GRAPHQL_PARSE_FAILED');
  context.reportError(refusal(message, 'GRAPHQL_VALIDATION_FAILED'));
}
const callbacks = { onReject: [reject], propagateOnRejection: false, exposeLimits: true };

/** Limits on the shape of one operation (GRAPHQL_MAX_* settings). */
export interface AbuseLimits extends CostOptions {
  /** Field nesting, fragments flattened; introspection not counted. */
  maxDepth: number;
  maxAliases: number;
  /** Lexer tokens of the whole document, checked while parsing. */
  maxTokens: number;
}

export interface AbuseLimitsOptions extends AbuseLimits {
  /** Hide "Did you mean ..." suggestions, which would name fields. */
  blockSuggestions: boolean;
}

/**
 * Refuses hostile operations before they run: GraphQL Armor for depth, aliases and tokens, plus our own rule for
 * upstream calls and directives (cost.ts); every refusal is an HTTP 400.
 * The cap on distinct upstream calls per request lives with the loaders, where calls are known.
 */
export function useAbuseLimits({
  maxDepth,
  maxAliases,
  maxTokens,
  blockSuggestions,
  ...cost
}: AbuseLimitsOptions): Plugin {
  const costRule = createCostRule(cost);
  return {
    onPluginInit({ addPlugin }) {
      addPlugin(
        EnvelopArmorPlugin({
          maxDepth: { n: maxDepth, flattenFragments: true, ...callbacks },
          // Armor lets aliases of __typename through by default; here every alias counts but those of `_entities`,
          // which a gateway gives each fetch it merges into one request (FEDERATION_MAX_REPRESENTATIONS bounds them).
          // Armor also passes an alias *named* `_entities`: one a selection set, as a response key is unique there.
          maxAliases: { n: maxAliases, allowList: ['_entities'], ...callbacks },
          maxTokens: { n: maxTokens, ...callbacks },
          // Counted with the cost (cost.ts): Armor's rule left out the directives of a fragment's second spread.
          maxDirectives: { enabled: false },
          // Shape-only cost would count upstream fields as scalars; the rule below weighs them.
          costLimit: { enabled: false },
          // Armor's hides only `Did you mean "…"?`; ours (below) every form graphql-js writes.
          blockFieldSuggestion: { enabled: false },
        }),
      );
      // Added after Armor so it wraps Armor's token-counting parser too.
      addPlugin(useValidationGuard());
    },
    onResultProcess({ result }) {
      keepRefusalStatus(result);
    },
    onValidate({ addValidationRule }) {
      addValidationRule(costRule);
      addValidationRule(nestingRule);
      return blockSuggestions ? schemaNamesHidden : repeatsDropped;
    },
  };
}

// One function for every request rather than a closure each.
const schemaNamesHidden: Exclude<ReturnType<NonNullable<Plugin['onValidate']>>, void> = ({
  valid,
  result,
  setResult,
}) => {
  if (!valid) setResult(withoutRepeats(result.map((error) => hideSchemaNames(clipped(error)))));
};

// A conflict two rules find (graphql-js's rule of overlapping fields, and yoga.ts's @stream check, which runs that
// rule again on a marked copy of a document that streams) is said once.
const repeatsDropped: typeof schemaNamesHidden = ({ valid, result, setResult }) => {
  if (!valid) setResult(withoutRepeats(result.map(clipped)));
};

// The first `length` UTF-16 units of `text`, one fewer where they would end inside a pair (half an emoji).
const cut = (text: string, length: number) => {
  const code = text.charCodeAt(length - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? length - 1 : length);
};
/**
 * graphql-js quotes the client's names and values in its refusals, the operation's name in each unused or undefined
 * variable's: one name of 60 KB (one token) beside 95 unused variables made a 5.7 MB answer to a 61 KB request. Each
 * quoted text is cut to 100 characters, the message to 1,000.
 */
const clipped = <E extends Error>(error: E): E => {
  if (error.message.length <= 200 || !(error instanceof GraphQLError)) return error;
  const message = error.message.replace(/"((?:[^"\\]|\\.)*)"/g, (quoted: string, text: string) =>
    text.length > 100 ? `"${cut(text, 100)}…"` : quoted,
  );
  const { nodes, source, positions, path, originalError, extensions } = error;
  const short = message.length > 1_000 ? `${cut(message, 1_000)}…` : message;
  return new GraphQLError(short, { nodes, source, positions, path, originalError, extensions }) as Error as E;
};

// graphql-js's suggestions name fields and types: `Did you mean "a" or "b"?`, `Did you mean to use an inline fragment
// on "A", "B", or "C"?`, `Did you mean the enum value "X"?`. Names hold no `?`. Its refusal of a missing required
// argument names the argument and its type (`Field "f" argument "a" of type "ID!" is required, but it was not
// provided.`): one request per field read every required argument out; others name a field's type (`since type
// "JSON" has no subfields`, `conflicting types "JSON" and "[_Entity]!"`). The field is the client's own word; a
// directive's arguments are the spec's.
const hideSchemaNames = <E extends Error>(error: E): E => {
  error.message = error.message
    .replace(/Did you mean [^?]*\?/g, '[Suggestion hidden]')
    .replace(
      /^(Field "[^"]+") argument "[^"]+" of type "[^"]+" is required, but it was not provided\.$/,
      '$1 lacks a required argument.',
    )
    .replace(
      /^(Field "[^"]+") must not have a selection since type "[^"]+" has no subfields\.$/,
      '$1 has no subfields.',
    )
    .replace(
      /^(Field "[^"]+") of type "[^"]+" must have a selection of subfields\./,
      '$1 must have a selection of subfields.',
    )
    .replace(/they return conflicting types "[^"]+" and "[^"]+"/g, 'they return conflicting types')
    .trim();
  return error;
};

// Two arguments missing from one field read the same once unnamed: the refusal is said once.
const withoutRepeats = <E extends Error>(errors: readonly E[]): E[] => {
  const seen = new Set<string>();
  return errors.filter((error) => {
    const { locations } = error as Partial<GraphQLError>;
    const key = `${error.message}\n${JSON.stringify(locations ?? [])}`;
    return seen.has(key) ? false : (seen.add(key), true);
  });
};

/**
 * With GRAPHQL_BATCHING: an operation of a batch that uses @defer or @stream is refused before it runs, and
 * the others keep their answers. Yoga writes a stream inside a batch as `{}` and never reads it; refused only
 * once executed, its fields' calls went on after the batch was answered, their bodies charged to an account
 * the response's end had closed.
 */
export function useNoStreamsInBatch(): Plugin {
  const { onRequestParse, isBatch } = batchMarks();
  return {
    onRequestParse,
    onExecute({ args, setResultAndStopExecution }) {
      const { request } = args.contextValue as { request: Request };
      if (isBatch(request) && incremental(args.document)) setResultAndStopExecution(refusedInBatch());
    },
  };
}

const refusedInBatch = (): ExecutionResult => ({
  errors: [refusal('@defer and @stream are not served inside a batch; send this operation alone', 'BAD_REQUEST')],
});

// Documents come from Yoga's parser cache, the same object for the same text: each is looked at once.
const incrementalDocuments = new WeakMap<DocumentNode, boolean>();

// Any use counts, whatever its `if:` says: the refusal depends on the document, not on its variables.
function incremental(document: DocumentNode): boolean {
  let found = incrementalDocuments.get(document);
  if (found !== undefined) return found;
  found = false;
  visit(document, {
    Directive(node) {
      if (node.name.value !== 'defer' && node.name.value !== 'stream') return;
      found = true;
      return BREAK;
    },
  });
  incrementalDocuments.set(document, found);
  return found;
}

/**
 * Whether running this operation with these variables certainly streams its result: it reaches, through selections
 * that certainly run (`@skip`/`@include` known from literals, variables sent or their defaults), a @defer or @stream
 * whose `if:` is absent or known true. A case it cannot be sure of counts as not streaming (Yoga still answers it).
 */
export function streams(
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Readonly<Record<string, unknown>> | null | undefined,
): boolean {
  if (!incremental(document)) return false;
  const operation = getOperationAST(document, operationName);
  if (!operation) return false;
  // A nullable variable neither sent nor given a default in the operation is left out: the argument takes its own
  // default. A non-null one left out fails the operation before it runs (undefined: not known to stream).
  const OMITTED = Symbol('omitted');
  const valueOf = (name: string) => {
    if (variables && Object.hasOwn(variables, name)) return variables[name];
    const definition = operation.variableDefinitions?.find((v) => v.variable.name.value === name);
    const fallback = definition?.defaultValue;
    if (fallback === undefined) return definition?.type.kind === Kind.NON_NULL_TYPE ? undefined : OMITTED;
    return fallback.kind === Kind.BOOLEAN ? fallback.value : undefined;
  };
  // An `if:` argument's value: true or false when it can be known before running, else undefined. `absent`: the
  // directive's own default (@defer's and @stream's `if` is true), which a variable left out also takes.
  const known = (condition: ValueNode | undefined, absent: boolean | undefined) => {
    if (condition === undefined) return absent;
    if (condition.kind === Kind.BOOLEAN) return condition.value;
    const value = condition.kind === Kind.VARIABLE ? valueOf(condition.name.value) : undefined;
    if (value === OMITTED) return absent;
    return typeof value === 'boolean' ? value : undefined;
  };
  const ifOf = ({ arguments: args }: DirectiveNode) => args?.find((argument) => argument.name.value === 'if')?.value;
  // Runs for certain: no `@skip` that is or may be true, no `@include` that is or may be false. Their `if` has no
  // default: left out, it is an error, not a value.
  const runs = (directives: readonly DirectiveNode[]) =>
    directives.every(
      (directive) =>
        (directive.name.value !== 'skip' || known(ifOf(directive), undefined) === false) &&
        (directive.name.value !== 'include' || known(ifOf(directive), undefined) === true),
    );
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }
  // Walked with a list, not recursion: inline fragments add no depth for the limits, so thousands may nest.
  const seen = new Set<string>();
  const pending: SelectionSetNode[] = [operation.selectionSet];
  for (let set = pending.pop(); set !== undefined; set = pending.pop()) {
    for (const selection of set.selections) {
      const directives = selection.directives ?? [];
      if (!runs(directives)) continue;
      const streamed = directives.some(
        (directive) =>
          (directive.name.value === 'defer' || directive.name.value === 'stream') &&
          known(ifOf(directive), true) === true,
      );
      if (streamed) return true;
      if (selection.kind !== Kind.FRAGMENT_SPREAD) {
        if (selection.selectionSet) pending.push(selection.selectionSet);
        continue;
      }
      const fragment = fragments.get(selection.name.value);
      if (!fragment || seen.has(fragment.name.value)) continue;
      seen.add(fragment.name.value);
      pending.push(fragment.selectionSet);
    }
  }
  return false;
}

/**
 * graphql-js parses and validates recursively: a document nested deeper than the stack allows
 * (possible once the token limit is raised) would be a RangeError and a 500. It is a refusal.
 * So is graphql-js giving up on a document whose fields are too many to compare for overlaps.
 */
function useValidationGuard(): Plugin {
  const tooDeep = (code: string) => refusal('The document is nested too deeply', code);
  const tooBig = refusal('The operation has too many fields to validate; split it up', 'GRAPHQL_VALIDATION_FAILED');
  return {
    onParse({ parseFn, setParseFn }) {
      setParseFn((source, options) => {
        try {
          return parseFn(source, options);
        } catch (error) {
          throw error instanceof RangeError ? tooDeep('GRAPHQL_PARSE_FAILED') : error;
        }
      });
    },
    onValidate({ validateFn, setValidationFn }) {
      setValidationFn((...args) => {
        try {
          const errors = validateFn(...args);
          return errors.some(isAborted) ? [tooBig] : errors;
        } catch (error) {
          if (error instanceof RangeError) return [tooDeep('GRAPHQL_VALIDATION_FAILED')];
          throw error;
        }
      });
    },
  };
}

// graphql-js' own abort error (its message without the error-count prefix) carries no code to tell it by.
const isAborted = (error: GraphQLError) => error.message === 'Validation aborted.' && !error.extensions.code;

/**
 * An `ID` variable sent as a JSON number past 2^53 (or as `1e21`) has no exact value once the body is parsed: graphql-js
 * would coerce it to the digits of another number (or to `1e+21`), and the field would read, and answer as the one
 * asked for, another catalog or group. Such an operation is refused before it runs, as graphql-js refuses a variable it
 * cannot coerce (BAD_USER_INPUT); entity representations refuse such a key the same way (schema/representations.ts).
 */
export function useExactIdVariables(): Plugin {
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const variables = args.variableValues as Record<string, unknown> | null | undefined;
      // Most requests hold no such number: the document is looked at only when one does.
      if (!variables || !Object.values(variables).some(inexactInteger)) return;
      const operation = getOperationAST(args.document, args.operationName);
      for (const definition of operation?.variableDefinitions ?? []) {
        const name = definition.variable.name.value;
        const type = getNamedType(typeFromAST(args.schema, definition.type));
        if (type?.name !== 'ID' || !inexactInteger(variables[name])) continue;
        const message = `Variable "$${name}" holds an ID as a number past 2^53 - 1, which has no exact value; send it as a string`;
        // A request error, as graphql-js's own refusal of a variable: 400 under application/graphql-response+json.
        const extensions = { code: 'BAD_USER_INPUT', http: { status: 400, spec: true } };
        setResultAndStopExecution({ errors: [new GraphQLError(message, { nodes: [definition], extensions })] });
        return;
      }
    },
  };
}

// graphql-js refuses a number that is no integer itself; a list holds IDs too.
const unsafeInteger = (value: unknown): boolean =>
  typeof value === 'number' && Number.isInteger(value) && !Number.isSafeInteger(value);
// One level of list (`[ID]`), not a walk: a variable of another type may nest thousands deep (JSON.parse takes any
// depth), and no argument of the schema takes a list of lists of ids.
const inexactInteger = (value: unknown): boolean =>
  Array.isArray(value) ? value.some(unsafeInteger) : unsafeInteger(value);
