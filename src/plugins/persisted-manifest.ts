import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Kind, parse } from 'graphql';
import { ConfigError } from '../config.ts';

/** The trusted documents: what GraphQL Code Generator's client preset writes with `persistedDocuments`. */
export interface Manifest {
  /** Document text by the hex SHA-256 of that text. */
  documents: ReadonlyMap<string, string>;
  /** The names of the manifest's operations, the only ones that become metric labels. */
  operationNames: ReadonlySet<string>;
}

/** Hex SHA-256 of a document's UTF-8 text, as APQ clients and the client preset compute it. */
export function sha256Hex(document: string): string {
  return createHash('sha256').update(document).digest('hex');
}

/**
 * A document id as clients send it (`sha256:<hex>` as the client preset and GraphQL over HTTP
 * write it, or bare hex as APQ links do) as the store's key; undefined when it is not one.
 */
export function documentHash(id: unknown): string | undefined {
  if (typeof id !== 'string') return undefined;
  const hex = id.startsWith('sha256:') ? id.slice('sha256:'.length) : id;
  return /^[0-9a-f]{64}$/.test(hex) ? hex : undefined;
}

/**
 * Reads a `persisted-documents.json` (id -> document) once at start. Every id must be the
 * SHA-256 of its document, so a manifest made with another hash fails here, not per request.
 */
export function loadManifest(path: string): Manifest {
  const entries = readJson(path);
  if (typeof entries !== 'object' || entries === null || Array.isArray(entries)) {
    throw new ConfigError(`PERSISTED_DOCUMENTS_PATH ${path} is not a JSON object of document id -> document`);
  }
  const documents = new Map<string, string>();
  const operationNames = new Set<string>();
  for (const [id, document] of Object.entries(entries)) {
    const hash = documentHash(id);
    if (typeof document !== 'string' || hash !== sha256Hex(document)) {
      throw new ConfigError(`PERSISTED_DOCUMENTS_PATH ${path}: entry ${id} is not a document whose SHA-256 is its id`);
    }
    documents.set(hash, document);
    for (const definition of parseEntry(path, id, document).definitions) {
      if (definition.kind === Kind.OPERATION_DEFINITION && definition.name) operationNames.add(definition.name.value);
    }
  }
  return { documents, operationNames };
}

// A document that is not GraphQL stops the start with one line too, not graphql-js's error and its stack.
function parseEntry(path: string, id: string, document: string) {
  try {
    return parse(document);
  } catch (error) {
    throw new ConfigError(
      `PERSISTED_DOCUMENTS_PATH ${path}: entry ${id} is not a GraphQL document: ${(error as Error).message}`,
    );
  }
}

// A missing or broken file stops the start with one line, as a bad setting does.
function readJson(path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new ConfigError(`PERSISTED_DOCUMENTS_PATH ${path} cannot be read as JSON: ${(error as Error).message}`);
  }
}
