import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    environment: 'jsdom',
    include: ['test/**/*.test.ts'],
    // Unit tests of front-end logic: each one is quick, none should hang.
    testTimeout: 10000,
    // One jsdom for all files instead of one per file: 2 s instead of 11 s for the gate. The tests
    // build their DOM from nothing in each test, so none depends on another file's leftovers.
    isolate: false
  }
});
