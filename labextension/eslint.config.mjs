// eslint (flat config) with typescript-eslint; `npm run lint` also runs tsc and prettier --check.
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

/** Text from a kernel or server goes into the DOM as text only. */
const NO_HTML = [
  {
    selector: 'MemberExpression[property.name=/^(innerHTML|outerHTML)$/]',
    message: 'Set text with textContent: never build HTML from strings.'
  },
  {
    selector:
      'CallExpression[callee.property.name=/^(insertAdjacentHTML|createContextualFragment|parseFromString)$/]',
    message: 'Build the DOM with createElement and textContent.'
  },
  {
    selector:
      'MemberExpression[object.name="document"][property.name=/^write(ln)?$/]',
    message: 'No document.write.'
  },
  { selector: 'CallExpression[callee.name="eval"]', message: 'No eval.' },
  {
    selector: 'NewExpression[callee.name="Function"]',
    message: 'No new Function.'
  }
];

export default defineConfig(
  { ignores: ['lib/', 'node_modules/'] },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    rules: {
      'no-restricted-syntax': ['error', ...NO_HTML],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }
      ],
      eqeqeq: ['error', 'smart'],
      curly: 'error'
    }
  },
  {
    files: ['scripts/**/*.mjs'],
    languageOptions: {
      globals: { console: 'readonly', process: 'readonly', URL: 'readonly' }
    }
  }
);
