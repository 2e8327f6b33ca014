// Schemathesis (property-based, from PyPI, in a venv under .local/) over the served OpenAPI description: whatever it
// generates from the spec — valid bodies, boundary values, and deliberately invalid ones — the API never answers
// 5xx, declares every status it answers, answers the declared content type, and every body (the error envelope
// included) conforms to the spec. `npm test` runs a short, seeded run; `npm run fuzz` a long one (KBQA_FUZZ_*).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../service/config.ts';
import { provisionSchemathesis } from '../stack/provision.ts';
import { makeUser, type TestUser } from './factories/accounts.ts';
import { testWithApp, type TestApp } from './helpers/app.ts';

interface Context {
  app: TestApp;
  databaseUrl: string;
  user: TestUser;
  documentId: string;
}

const test = testWithApp<Omit<Context, 'app'>>();

/** The checks that say "no 5xx, every error in the envelope, every response conforming to the spec". */
const CHECKS = [
  'not_a_server_error',
  'status_code_conformance',
  'content_type_conformance',
  'response_schema_conformance',
];
const EXAMPLES = Number(process.env.KBQA_FUZZ_EXAMPLES ?? 10);
const PHASES = process.env.KBQA_FUZZ_PHASES ?? 'examples,coverage,fuzzing';
const SEED = Number(process.env.KBQA_FUZZ_SEED ?? 20261122);

test.before(async (t) => {
  t.context.user = await makeUser(t.context.app.deps.store, { label: 'schemathesis' });
  const ingested = await t.context.app.call('POST', '/api/v1/documents', {
    key: t.context.user.key,
    body: {
      kb_id: t.context.user.defaultKnowledgeBaseId,
      filename: 'fuzz.md',
      content: '# Fuzz\n\nSchemathesis reads this document.',
    },
  });
  if (ingested.status !== 201) throw new Error(`ingest failed: ${ingested.status} ${JSON.stringify(ingested.body)}`);
  t.context.documentId = ingested.body.document.id;
});

/**
 * Random path ids only ever find 404s: per-operation parameters give the fuzzer a real knowledge base and document
 * of its user, so the success paths are exercised too (the bodies and query strings stay generated).
 */
function configFile(directory: string, knowledgeBaseId: string, documentId: string): string {
  const operation = (path: string, id: string) =>
    `[[operations]]\ninclude-path = "${path}"\nparameters = { "path.id" = "${id}" }\n`;
  const path = join(directory, 'schemathesis.toml');
  writeFileSync(
    path,
    [
      operation('/api/v1/knowledge-bases/{id}', knowledgeBaseId),
      operation('/api/v1/knowledge-bases/{id}/documents', knowledgeBaseId),
      operation('/api/v1/documents/{id}', documentId),
      operation('/api/v1/documents/{id}/retry', documentId),
    ].join('\n'),
  );
  return path;
}

function run(command: string, args: string[], cwd: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    // In a scratch directory: Schemathesis keeps its example database in .schemathesis/ of its working directory.
    const child = spawn(command, args, {
      cwd,
      env: { ...process.env, NO_COLOR: '1', SCHEMATHESIS_TELEMETRY: 'false' },
    });
    let output = '';
    child.stdout.on('data', (data: Buffer) => (output += data.toString()));
    child.stderr.on('data', (data: Buffer) => (output += data.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

test('Schemathesis finds no 5xx, no undeclared status or content type, and no body outside the spec', async (t) => {
  const { app, user } = t.context;
  // npm test and npm run fuzz provision it first (stack/cli.ts); run alone, the test provisions it itself.
  const schemathesis = process.env.KBQA_SCHEMATHESIS ?? provisionSchemathesis(loadConfig(process.env).localDir);
  const reports = mkdtempSync(join(tmpdir(), 'kbqa-schemathesis-'));
  try {
    const { code, output } = await run(
      schemathesis,
      [
        '--config-file',
        configFile(reports, user.defaultKnowledgeBaseId, t.context.documentId),
        'run',
        `${app.baseUrl}/api/v1/openapi.json`,
        '--checks',
        CHECKS.join(','),
        '--header',
        `Authorization: Bearer ${user.key}`,
        '--max-examples',
        String(EXAMPLES),
        '--phases',
        PHASES,
        '--seed',
        String(SEED),
        '--workers',
        '2',
        '--request-timeout',
        '60',
        '--suppress-health-check',
        'all',
        '--report',
        'json',
        '--report-json-path',
        join(reports, 'report.json'),
      ],
      reports,
    );
    t.log(`schemathesis seed ${SEED}, ${EXAMPLES} examples per operation, phases ${PHASES}`);
    const summary = output
      .split('\n')
      .filter((line) => /passed|failed|error|operations|generated/i.test(line))
      .slice(-12);
    for (const line of summary) t.log(line.trim());
    if (code !== 0) t.log(output.slice(-12_000));
    t.is(code, 0, 'schemathesis reported failures (its output is above)');
    // The run must have exercised the API, not merely loaded the spec.
    const report = JSON.parse(readFileSync(join(reports, 'report.json'), 'utf8')) as unknown;
    t.truthy(report);
    t.regex(output, /\b\d+ (?:passed|generated)/);
  } finally {
    rmSync(reports, { recursive: true, force: true });
  }
});
