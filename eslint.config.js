// `npm run lint`: ESLint with typescript-eslint over the whole repository (CI runs it).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'bench/.build/**', '.vitest-tmp/**', 'docs/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        URL: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        setImmediate: 'readonly',
        performance: 'readonly',
        Request: 'readonly',
        Response: 'readonly',
        Headers: 'readonly',
        fetch: 'readonly',
        AbortController: 'readonly',
        AbortSignal: 'readonly',
        TextEncoder: 'readonly',
        TextDecoder: 'readonly',
        structuredClone: 'readonly',
        queueMicrotask: 'readonly',
        global: 'readonly',
        globalThis: 'readonly',
        ReadableStream: 'readonly',
        URLSearchParams: 'readonly',
        crypto: 'readonly',
      },
    },
    rules: {
      // Unused names are dead code; a leading underscore marks a parameter kept for its position.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports', disallowTypeAnnotations: false }],
      // Named exports only: one name per thing, everywhere.
      'no-restricted-exports': [
        'error',
        { restrictDefaultExports: { direct: true, named: true, defaultFrom: true, namedFrom: true, namespaceFrom: true } },
      ],
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      'no-console': 'off',
    },
  },
  {
    // Tool configuration files are loaded by their tools through a default export; a .d.ts describes one (a .graphql text module).
    files: ['eslint.config.js', 'tsup.config.ts', 'vitest.config.ts', '**/*.d.ts'],
    rules: { 'no-restricted-exports': 'off' },
  },
  {
    files: ['src/**/*.ts', 'adapters/**/*.ts'],
    rules: {
      // A getter in an object literal made inside a function is a new closure per call, so every object
      // gets a hidden class of its own, made in V8's old generation and pointing at the call's objects:
      // young-generation collections then keep them all alive (promoted, until a full collection). Use a
      // class (its accessors live on the prototype) or a plain property.
      'no-restricted-syntax': [
        'error',
        {
          selector: ':function ObjectExpression > Property[kind=/^(get|set)$/]',
          message: 'an accessor in an object literal inside a function gives each object its own hidden class: use a class',
        },
      ],
    },
  },
  {
    // Tests may assert on loosely typed answers.
    files: ['test/**/*.ts', 'examples/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-non-null-assertion': 'off' },
  },
);
