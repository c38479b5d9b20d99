import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    environment: 'jsdom',
    include: ['test/**/*.test.ts'],
    // Unit tests of front-end logic: each one is quick, none should hang.
    testTimeout: 10000
  }
});
