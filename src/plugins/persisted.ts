import { usePersistedOperations, type CustomErrorFactory } from '@graphql-yoga/plugin-persisted-operations';
import { createGraphQLError, type GraphQLParams, type Plugin } from 'graphql-yoga';
import { documentHash, loadManifest, sha256Hex, type Manifest } from './persisted-manifest.ts';
import { createDocumentStore, type DocumentStore, type DocumentStoreOptions } from './persisted-store.ts';

export interface PersistedDocumentsOptions {
  /** The trusted documents, served by id; undefined when PERSISTED_DOCUMENTS_PATH is unset. */
  manifest: Manifest | undefined;
  /** Refuse every document that is not in the manifest (no query text, no APQ). */
  only: boolean;
  /** Where automatic persisted queries are kept; undefined turns APQ off. */
  store: DocumentStore | undefined;
}

// Apollo's link matches the message or the code, urql's exchange only the message.
const notFound = {
  message: 'PersistedQueryNotFound',
  // No cache may keep the miss (the document is registered right after it): it goes out `no-store`, as every refusal.
  extensions: { code: 'PERSISTED_QUERY_NOT_FOUND', http: { status: 404 } },
};
const notSupported = {
  message: 'PersistedQueryNotSupported',
  extensions: { code: 'PERSISTED_QUERY_NOT_SUPPORTED', http: { status: 400 } },
};
const trustedOnly = (message: string): CustomErrorFactory => ({
  message,
  extensions: { code: 'TRUSTED_DOCUMENT_REQUIRED', http: { status: 400 } },
});
/** A document sent with its matching APQ hash: kept on the request's context until it is about to run. */
interface RegistrationContext {
  apqRegistration?: { hash: string; document: string };
}

const notAnOperation = () =>
  createGraphQLError('Each operation of a batch must be a JSON object', {
    extensions: { code: 'BAD_REQUEST', http: { status: 400 } },
  });
const badOperationName = () =>
  createGraphQLError('Expected "operationName" param to be a string', {
    extensions: { code: 'BAD_REQUEST', http: { status: 400 } },
  });
const noQuery = { message: 'Must provide query string.', extensions: { code: 'BAD_REQUEST', http: { status: 400 } } };

/** `extensions.persistedQuery.sha256Hash` as Apollo's and urql's APQ send it (version 1). */
function apqHash(params: GraphQLParams): unknown {
  const persisted: unknown = params.extensions?.persistedQuery;
  if (typeof persisted !== 'object' || persisted === null) return undefined;
  const { version, sha256Hash } = persisted as { version?: unknown; sha256Hash?: unknown };
  return version === 1 ? sha256Hash : undefined;
}

/** `documentId` as sent: in the body, or in the URL of a GET (which Yoga's params leave out). */
function sentDocumentId(params: GraphQLParams, request: Request): unknown {
  const body = (params as { documentId?: unknown }).documentId;
  if (body !== undefined || request.method !== 'GET' || !request.url.includes('documentId=')) return body;
  return new URL(request.url).searchParams.get('documentId') ?? undefined;
}

// `null` or empty (a generic client's unset field) names none.
const unset = (field: unknown) => field === undefined || field === null || field === '';

/** The document id a request names: `documentId` (body, or URL of a GET), else the APQ hash. */
function documentIdOf(params: GraphQLParams, request: Request): string | null {
  const sent = sentDocumentId(params, request);
  const id = unset(sent) ? apqHash(params) : sent;
  return typeof id === 'string' ? id : null;
}

// The text would run in place of the document named (the id of a GET was never read then): a client or CDN asking for
// one document got, and kept, another's answer.
const idAndText = () =>
  createGraphQLError('Send a document id or a query text, not both', {
    extensions: { code: 'BAD_REQUEST', http: { status: 400 } },
  });

/**
 * Trusted documents and automatic persisted queries (APQ) on Yoga's persisted-operations
 * plugin: a request may name a document by id instead of sending it; the manifest is looked
 * up first, then the APQ store. A document sent with a hash is checked against that hash, and
 * stored only once it has parsed and passed validation (every abuse limit), as it starts to run.
 * Persisted documents are parsed and validated like any other, so every abuse limit still applies.
 */
function usePersistedDocuments({ manifest, only, store }: PersistedDocumentsOptions): Plugin {
  const apq = only ? undefined : store;
  const lookup = async (id: string) => {
    const hash = documentHash(id);
    if (hash === undefined) return null;
    return manifest?.documents.get(hash) ?? (await apq?.get(hash)) ?? null;
  };
  return {
    onPluginInit({ addPlugin }) {
      addPlugin(
        usePersistedOperations({
          allowArbitraryOperations: !only,
          extractPersistedOperationId: documentIdOf,
          getPersistedOperation: lookup,
          customErrors: {
            notFound: only ? trustedOnly('No trusted document has this id') : manifest || apq ? notFound : notSupported,
            keyNotFound: only ? trustedOnly('Send the id of a trusted document') : noQuery,
            persistedQueryOnly: trustedOnly('Only trusted documents run here: send the id of one, not its text'),
          },
        }),
      );
    },
    // Runs before the lookup above (envelop adds a plugin right after its parent): it sees the request as sent.
    onParams({ params, request, context }) {
      // Yoga checks an operation's shape only after these hooks; a batch item may be anything JSON allows.
      if (typeof params !== 'object' || params === null || Array.isArray(params)) throw notAnOperation();
      // Yoga checks the other params' types, not this one's: any other value is a malformed request (400 whatever the
      // Accept), not an operation the document lacks (200 under application/json).
      if (params.operationName != null && typeof params.operationName !== 'string') throw badOperationName();
      // An empty query is none, as for the lookup: the id beside it is looked up.
      if (typeof params.query !== 'string' || params.query === '') return;
      if (!unset(sentDocumentId(params, request))) throw idAndText();
      // Trusted documents only: APQ is off, and any text is refused as such (TRUSTED_DOCUMENT_REQUIRED), whatever hash
      // comes with it.
      if (only) return;
      const claimed = apqHash(params);
      if (claimed === undefined) return;
      const hash = sha256Hex(params.query);
      if (documentHash(claimed) !== hash) {
        throw createGraphQLError('extensions.persistedQuery.sha256Hash is not the SHA-256 of the query sent', {
          extensions: { code: 'PERSISTED_QUERY_MISMATCH', http: { status: 400 } },
        });
      }
      if (apq) (context as RegistrationContext).apqRegistration = { hash, document: params.query };
    },
    // Parsed and validated by now: a document that breaks a limit never takes room in the store. Stored alongside
    // the operation, not before it: a frozen Redis then costs the request one REDIS_TIMEOUT_MS, not one more per
    // command; the answer still waits for the write, so the hash alone finds it on the client's next request.
    // Synchronous without a registration: an ordinary request goes on without a promise.
    onExecute({ args }) {
      const registration = (args.contextValue as RegistrationContext).apqRegistration;
      if (!registration || !apq) return;
      const stored = apq.set(registration.hash, registration.document);
      return { onExecuteDone: () => stored };
    },
  };
}

export interface PersistedDocuments {
  plugin: Plugin;
  /** The manifest's operation names when there is one: the only ones kept as metric labels. */
  operationNames: ReadonlySet<string> | undefined;
  close(): Promise<void>;
}

/** Loads the manifest (once, at start) and opens the APQ store, as the configuration says. */
export function createPersistedDocuments({
  path,
  only,
  apq,
}: {
  path: string | undefined;
  only: boolean;
  apq: DocumentStoreOptions | false;
}): PersistedDocuments {
  const manifest = path === undefined ? undefined : loadManifest(path);
  const store = apq && !only ? createDocumentStore(apq) : undefined;
  return {
    plugin: usePersistedDocuments({ manifest, only, store }),
    operationNames: manifest?.operationNames,
    close: async () => store?.close(),
  };
}
