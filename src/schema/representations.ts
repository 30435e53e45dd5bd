import {
  GraphQLError,
  getArgumentValues,
  getNamedType,
  isScalarType,
  isUnionType,
  Kind,
  type GraphQLField,
  type GraphQLResolveInfo,
  type GraphQLSchema,
  typeFromAST,
} from 'graphql';
// The executor's own collection of an operation's root fields (Yoga's @graphql-tools/executor, whose version of
// @graphql-tools/utils package.json keeps): graphql-js's merges every copy of a response key, where this one runs
// each `@defer`red fragment again as a patch of its own.
import { collectFields } from '@graphql-tools/utils';
import type { ObjectRef } from '@pothos/core';
import type { Context } from '../context.ts';
import { builder } from './builder.ts';

type Types = typeof builder extends PothosSchemaTypes.SchemaBuilder<infer T> ? T : never;

/**
 * Makes `ref` an entity keyed by `keys` (`@key(fields: "<keys, space-separated>")`), whose reference
 * resolves to its checked key alone.
 */
export function asKeyedEntity<const Key extends string>(
  ref: ObjectRef<Types, Record<Key, string>>,
  keys: readonly Key[],
): void {
  builder.asEntity(ref, {
    // The selection's template type spells the key out; the string is the same keys, joined.
    key: builder.selection<Record<Key, string>>(keys.join(' ') as never),
    resolveReference: (representation) => keyOf(ref.name, keys, representation),
  });
}

/**
 * The key of one entity representation, its ids coerced as ID arguments are (a string, or an
 * integer as its digits). Only the key is kept: a reference costs no upstream call, and the fields
 * selected on it check the ids (length, characters) as their arguments, before anything is sent.
 *
 * @throws GraphQLError (BAD_USER_INPUT) when a key field is missing or not an ID
 */
function keyOf<const Key extends string>(
  typename: string,
  keys: readonly Key[],
  representation: Record<string, unknown>,
): Record<Key, string> {
  const key = {} as Record<Key, string>;
  for (const name of keys) {
    const value = representation[name];
    // An integer past 2^53 has no exact value once JSON is parsed: its String() would be another id.
    if ((typeof value !== 'string' || value === '') && !Number.isSafeInteger(value)) {
      throw badInput(
        `A ${typename} representation needs "${name}" as a non-empty ID string`,
        'An entity representation needs each key field as a non-empty ID string',
      );
    }
    key[name] = String(value);
  }
  return key;
}

/**
 * Checks `_entities` before any reference resolves. Its representations count against the
 * request's allowance (FEDERATION_MAX_REPRESENTATIONS), all operations of the request together. An
 * operation takes those of all its `_entities` fields at its first (a gateway merges fetches into aliases
 * of it), so one past the allowance is refused whole before any of its fields sends a call. A representation
 * that is not an object naming one of this subgraph's entity types fails alone, at its own path, while
 * the others in the batch resolve (Apollo's resolver, which Pothos installs, would throw for the whole
 * batch, masked as unexpected).
 */
export function guardEntities(schema: GraphQLSchema): GraphQLSchema {
  const field = schema.getQueryType()?.getFields()._entities;
  const union = field && getNamedType(field.type);
  if (!field?.resolve || !isUnionType(union)) throw new Error('Expected a subgraph schema with _entities');
  const resolve = field.resolve;
  const entityTypes = union.getTypes().map((type) => type.name);
  refuseInexactLiterals(schema);
  // Once per operation (each operation of a batch has a context of its own; all share the request's allowance). An
  // operation whose text never names `_entities` (nearly all) has nothing to take: no walk of its fields.
  const admit = (context: Context & Admitted, info: GraphQLResolveInfo) => {
    if (!(ADMITTED in context)) {
      const named = info.operation.loc?.source.body.includes(field.name) ?? true;
      context[ADMITTED] = named ? takeAllowance(context, info, field) : undefined;
    }
    if (context[ADMITTED]) throw context[ADMITTED];
  };
  // Every root field that calls the PIM takes the operation's verdict too, whichever runs first: refused, it calls
  // nothing and says why (a deferred `_entities` refuses in a later part: the initial one must not hold a bare null).
  for (const other of Object.values(schema.getQueryType()!.getFields())) {
    // The fields that call the PIM: every one returns its JSON (cost.ts); `_service` calls nothing.
    if (other === field || !other.resolve || getNamedType(other.type).name !== 'JSON') continue;
    const inner = other.resolve;
    other.resolve = (source, args, context: Context & Admitted, info) => {
      admit(context, info);
      return inner(source, args, context, info);
    };
  }
  field.resolve = (source, args: { representations: unknown[] }, context: Context & Admitted, info) => {
    admit(context, info);
    const { representations } = args;
    markInexactKeyVariables(info, representations);
    return representations.map((representation, index) => {
      // A list item that is an Error becomes null with that error at the item's path.
      try {
        // JSON gives no way to put a __typename on anything but an object.
        const typename = (representation as { __typename?: unknown } | null)?.__typename;
        if (!isOneOf(typename, entityTypes)) {
          throw badInput(
            `Representation ${index} must be an object whose __typename is one of ${entityTypes.join(', ')}`,
            `Representation ${index} must be an object whose __typename is an entity type of this subgraph`,
          );
        }
        return (resolve(source, { representations: [representation] }, context, info) as unknown[])[0];
      } catch (error) {
        return error;
      }
    });
  };
  return schema;
}

// What a representation's field written as a Float or enum literal becomes: keyOf refuses it, as an ID argument would.
const INEXACT = Symbol('neither an ID string nor an integer literal');

/**
 * `_Any` parses a literal untyped: a Float (`1.0`, `2e0`, `1.0000000000000001`) became a number and an enum
 * (`MACHINERY`) a string, each taken for an id (catalog "1") where an ID argument refuses the same literal. Such a
 * field of a representation written in the document becomes a value its key check refuses, at its own index.
 */
function refuseInexactLiterals(schema: GraphQLSchema) {
  const any = schema.getType('_Any');
  if (!isScalarType(any)) throw new Error('Expected a subgraph schema with _Any');
  const parseLiteral = any.parseLiteral.bind(any);
  any.parseLiteral = (node, variables) => {
    const value = parseLiteral(node, variables) as Record<string, unknown>;
    if (node.kind !== Kind.OBJECT) return value;
    for (const { name, value: literal } of node.fields) {
      if (literal.kind === Kind.FLOAT || literal.kind === Kind.ENUM) value[name.value] = INEXACT;
    }
    return value;
  };
}

// The types of a variable whose value is a key as an ID argument takes it (a string, an integer), or `_Any`'s own.
const KEY_VARIABLE_TYPES = new Set(['ID', 'String', 'Int', '_Any']);

/**
 * A key field written in the document as a variable of another type (`catalogId: $k` with `$k: Float`, or an enum):
 * graphql-js checks no variable's place inside a scalar's literal, and `_Any` reads its value untyped (catalog "7"
 * from a Float 7, "OBJECT" from an enum). Marked as its literal would be, so keyOf refuses it at its own index.
 */
function markInexactKeyVariables(info: GraphQLResolveInfo, representations: unknown[]): void {
  const value = info.fieldNodes[0]?.arguments?.find((argument) => argument.name.value === 'representations')?.value;
  // A router sends the whole list as one `[_Any!]!` variable: nothing is written inside it.
  if (value === undefined || value.kind === Kind.VARIABLE) return;
  const items = value.kind === Kind.LIST ? value.values : [value];
  items.forEach((item, index) => {
    const representation = representations[index];
    if (item.kind !== Kind.OBJECT || typeof representation !== 'object' || representation === null) return;
    for (const { name, value: field } of item.fields) {
      if (field.kind !== Kind.VARIABLE) continue;
      const definition = info.operation.variableDefinitions?.find((d) => d.variable.name.value === field.name.value);
      const type = definition && getNamedType(typeFromAST(info.schema, definition.type));
      if (type && !KEY_VARIABLE_TYPES.has(type.name)) {
        (representation as Record<string, unknown>)[name.value] = INEXACT;
      }
    }
  });
}

// The operation's verdict on its representations, on its context (no WeakMap per request: request-slot.ts says why).
const ADMITTED = Symbol('entities admitted');
type Admitted = { [ADMITTED]?: GraphQLError | undefined };

/**
 * Takes the representations of every `_entities` field the operation runs from the request's allowance: its root
 * fields as execution collects them (skipped ones left out, each response key once per group: the fields not
 * deferred, then each `@defer`red fragment, which runs its copy again; validation made the arguments of a key's
 * nodes the same).
 */
function takeAllowance(context: Context, info: GraphQLResolveInfo, field: GraphQLField<unknown, unknown>) {
  const { schema, fragments, variableValues, parentType, operation } = info;
  // Variables as the executor keeps them (graphql 16 reads only the coerced values; the sources are graphql 17's).
  const variables = { coerced: variableValues, sources: {} };
  const { fields, patches } = collectFields(schema, fragments, variables, parentType, operation.selectionSet);
  let count = 0;
  for (const group of [fields, ...patches.map((patch) => patch.fields)]) {
    for (const [node] of group.values()) {
      if (node?.name.value !== field.name) continue;
      const { representations } = getArgumentValues(field, node, variableValues);
      count += Array.isArray(representations) ? representations.length : 1;
    }
  }
  if (context.representations.take(count)) return undefined;
  const { limit } = context.representations;
  return badInput(`${count} more entity representations would pass the limit of ${limit} per request; split the batch`);
}

const isOneOf = (value: unknown, names: readonly string[]): boolean =>
  typeof value === 'string' && names.includes(value);

/**
 * A refusal of input; `unnamed`, when it names the schema's entity types or key fields, is the same refusal in words
 * that name neither, sent where the schema is hidden (withoutSchemaNames).
 */
const badInput = (message: string, unnamed?: string) => {
  const error = new GraphQLError(message, { extensions: { code: 'BAD_USER_INPUT' } });
  if (unnamed !== undefined) unnamedWords.set(error, unnamed);
  return error;
};

const unnamedWords = new WeakMap<Error, string>();

/**
 * The error as it may go out where the schema is hidden (no introspection, no suggestions: production): a refusal of a
 * representation says what was wrong without listing the entity types or naming the key fields it wanted. `_entities`
 * is served there too (a gateway follows references through it), and its refusals read the schema out to anyone.
 * Changes the error in place, as the mask does (graphql-js located it: ours is its originalError).
 */
export function withoutSchemaNames<E extends Error>(error: E): E {
  const original = (error as { originalError?: unknown }).originalError;
  const words = unnamedWords.get(error) ?? (original instanceof Error ? unnamedWords.get(original) : undefined);
  if (words !== undefined) error.message = words;
  return error;
}
