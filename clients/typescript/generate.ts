// `npm run client:generate`: writes the OpenAPI description the code builds (service/http/openapi/) to
// openapi.json, and the TypeScript types of every path, operation and schema (openapi-typescript) to schema.d.ts.
// No server is needed. test/typescriptClient.test.ts fails when the committed files differ from a fresh generation.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString, COMMENT_HEADER, type OpenAPI3 } from 'openapi-typescript';
import { openApiDocument } from '../../service/http/openapi/document.ts';

const HERE = fileURLToPath(new URL('.', import.meta.url));
export const SPEC_FILE = `${HERE}openapi.json`;
export const TYPES_FILE = `${HERE}schema.d.ts`;

/** The two generated files' contents, from the code as it is now. */
export async function generateClientFiles(): Promise<{ spec: string; types: string }> {
  const { document, json } = openApiDocument();
  const ast = await openapiTS(structuredClone(document) as unknown as OpenAPI3, { silent: true });
  return {
    spec: json,
    types: `${COMMENT_HEADER.replace(' */', ' * Regenerate with `npm run client:generate` (from service/http/openapi/).\n */')}${astToString(ast)}`,
  };
}

/** The files that differ from a fresh generation (empty when the committed client is current). */
export async function staleClientFiles(): Promise<string[]> {
  const fresh = await generateClientFiles();
  const read = (path: string) => {
    try {
      return readFileSync(path, 'utf8');
    } catch {
      return null;
    }
  };
  return [
    ...(read(SPEC_FILE) === fresh.spec ? [] : [SPEC_FILE]),
    ...(read(TYPES_FILE) === fresh.types ? [] : [TYPES_FILE]),
  ];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { spec, types } = await generateClientFiles();
  writeFileSync(SPEC_FILE, spec);
  writeFileSync(TYPES_FILE, types);
  console.log(`[kbqa] wrote ${SPEC_FILE} and ${TYPES_FILE}`);
}
