// The lint step of `npm test` and `npm run lint`. It exists for one class of bug: a regular expression whose
// matching time grows faster than linearly with its input (ReDoS). Every regex here may one day see a user's
// document, question or file, and a single super-linear match blocks the event loop for every request (issue 8:
// a 3.2 KB markdown heading took 5.4 s to ingest). Only the two rules that catch it are on, as errors, so the
// lint stays quiet about style and a failure always means "this pattern can backtrack or move super-linearly"
// (or cannot be checked: a RegExp built at run time).
import tsParser from '@typescript-eslint/parser';
import regexp from 'eslint-plugin-regexp';

export default [
  {
    // Provisioned servers, dependencies and generated benchmark output are not ours to lint.
    ignores: ['.local/**', 'node_modules/**', 'bench/results/**', 'web/dist/**'],
  },
  {
    files: [
      'service/**/*.ts',
      'stack/**/*.ts',
      'bench/**/*.ts',
      'test/**/*.ts',
      // The typed API client (its generated schema.d.ts holds no pattern, but the wrapper and generator may).
      'clients/**/*.ts',
      // The web app parses answers and citations from models and documents in people's browsers.
      'web/**/*.ts',
      'web/**/*.tsx',
      'scripts/**/*.mjs',
      'bin/**',
      'eslint.config.mjs',
    ],
    languageOptions: {
      parser: tsParser,
      ecmaVersion: 'latest',
      sourceType: 'module',
      parserOptions: { ecmaFeatures: { jsx: true } },
    },
    linterOptions: {
      // A disable comment that no longer suppresses anything is a stale excuse: fail on it too.
      reportUnusedDisableDirectives: 'error',
    },
    plugins: { regexp },
    rules: {
      // Nested or adjacent quantifiers that can match the same text: exponential or polynomial backtracking.
      'regexp/no-super-linear-backtracking': 'error',
      // A pattern not anchored at the start whose failing attempt scans to the end from every start position
      // (e.g. /\s+$/): quadratic over the whole input even without backtracking inside one attempt.
      'regexp/no-super-linear-move': 'error',
      // Alternatives that can match the same text inside a quantifier, e.g. /^(\w|\d)+x/ or /^(a|a)*$/: exponential
      // backtracking the two rules above do not see. 'all' reports every overlap, not only inside a quantifier.
      'regexp/no-dupe-disjunctions': ['error', { report: 'all' }],
      // A pattern built at run time cannot be checked here at all: every regex must be a literal.
      'no-restricted-syntax': [
        'error',
        {
          selector: "NewExpression[callee.name='RegExp'], CallExpression[callee.name='RegExp']",
          message: 'Build no regular expression at run time: the ReDoS lint can only check literals.',
        },
      ],
    },
  },
];
