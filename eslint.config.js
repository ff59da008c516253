import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** The dialect folders: the one place that knows an engine (docs/architecture.md#warehouse). */
const dialectCode = ['src/warehouse/duckdb/**', 'src/warehouse/postgres/**'];
const dialectFolders = {
  group: ['**/warehouse/duckdb/*', '**/warehouse/postgres/*', './duckdb/*', './postgres/*'],
  message: 'import the warehouse through src/warehouse/index.ts or types.ts, not a dialect folder',
};
const engineLibraries = ['@duckdb/node-api', 'pg', 'pg-copy-streams'].map((name) => ({
  name,
  message: 'an engine library belongs in its dialect folder (src/warehouse/duckdb/, src/warehouse/postgres/)',
}));
const engineName = '/^(duckdb|postgres)$/';
const engineCheckMessage =
  'shared code does not ask which engine it runs on: make the difference a method of the dialects (src/warehouse/types.ts)';
const engineChecks = [
  `BinaryExpression[left.value=${engineName}]`,
  `BinaryExpression[right.value=${engineName}]`,
  `SwitchCase[test.value=${engineName}]`,
].map((selector) => ({ selector, message: engineCheckMessage }));

export default tseslint.config(
  { ignores: ['node_modules', 'data', 'dist', 'coverage'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    // Plain JavaScript (bin/, the benchmark's children) runs on Node: its globals are not undefined names.
    files: ['**/*.js'],
    languageOptions: {
      globals: { process: 'readonly', console: 'readonly', URL: 'readonly', performance: 'readonly' },
    },
  },
  {
    // Dialect code stays in its folder: tests, benchmarks and scripts reach it through the warehouse factory and
    // interface (src/warehouse/index.ts, types.ts). The warehouse's own tests may test a dialect's parts directly.
    files: ['**/*.ts', '**/*.js'],
    ignores: ['src/**', 'test/warehouse/**'],
    rules: { 'no-restricted-imports': ['error', { patterns: [dialectFolders] }] },
  },
  {
    // The engine adapter: in src/, only the dialect folders import an engine's library or a dialect's module, and
    // only the factory (index.ts) and the list of dialects (dialects.ts) name the folders.
    files: ['src/**/*.ts'],
    ignores: [...dialectCode, 'src/warehouse/index.ts', 'src/warehouse/dialects.ts'],
    rules: { 'no-restricted-imports': ['error', { paths: engineLibraries, patterns: [dialectFolders] }] },
  },
  {
    // Nor does shared code ask which engine it runs on: what differs is a method of the dialect (types.ts).
    files: ['src/**/*.ts'],
    ignores: dialectCode,
    rules: { 'no-restricted-syntax': ['error', ...engineChecks] },
  },
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
    },
  },
);
