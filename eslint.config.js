// ESLint flat config: neostandard (its @stylistic rules are the formatter: `npm run format` is `eslint --fix`),
// tuned to the code's own style: semicolons, single quotes, trailing commas in multiline lists,
// no space before a named function's parenthesis.
import neostandard, { resolveIgnoresFromGitignore } from 'neostandard';

export default [
  ...neostandard({
    ts: true,
    filesTs: ['**/*.cts'],
    semi: true,
    ignores: [...resolveIgnoresFromGitignore(), 'coverage/**', 'dist/**', 'test/**/contracts/**'],
  }),
  {
    name: 'project/style',
    rules: {
      '@stylistic/comma-dangle': ['error', 'always-multiline'],
      '@stylistic/space-before-function-paren': ['error', { anonymous: 'always', named: 'never', asyncArrow: 'always' }],
      // Related keys share a line in multiline objects on purpose (ABI entries, schemas, fixtures).
      '@stylistic/object-property-newline': 'off',
      // Names that are not ours: @noble/hashes' keccak_256, the result field is_valid frontends parse.
      camelcase: ['error', { allow: ['^keccak_256$', '^is_valid$'], properties: 'never' }],
      // `void promise` marks a deliberate fire-and-forget; only as a statement, never as a value.
      'no-void': ['error', { allowAsStatement: true }],
      // `new Promise((r) => ...)` is the short form of one-line waits, `(_, reject)` a promise that only rejects;
      // a swapped (reject, resolve) is still caught.
      'promise/param-names': ['error', { resolvePattern: '^(_|_?resolve|r|done)$' }],
    },
  },
  {
    name: 'project/typescript',
    files: ['**/*.ts', '**/*.cts'],
    rules: {
      // TypeBox's `const X = Type.Object(...)` + `type X = Static<typeof X>` pair; tsc itself rejects real redeclarations.
      '@typescript-eslint/no-redeclare': 'off',
    },
  },
  {
    name: 'project/console',
    // The console's browser modules (served as they are, no bundler).
    files: ['console/**/*.js'],
    languageOptions: {
      globals: { document: 'readonly', window: 'readonly', location: 'readonly', sessionStorage: 'readonly', Node: 'readonly' },
    },
  },
];
