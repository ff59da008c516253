import js from '@eslint/js';
import tseslint from 'typescript-eslint';

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
    // Dialect code stays in its folder: everything else reaches it through the warehouse factory and interface
    // (src/warehouse/index.ts, types.ts). The warehouse's own tests may test a dialect's parts directly.
    files: ['**/*.ts', '**/*.js'],
    ignores: ['src/warehouse/**', 'test/warehouse/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/warehouse/duckdb/*', '**/warehouse/postgres/*'],
              message: 'import the warehouse through src/warehouse/index.ts or types.ts, not a dialect folder',
            },
          ],
        },
      ],
    },
  },
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
    },
  },
);
