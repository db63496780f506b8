import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// LangGraph's checkpointer validation suite: its `validate()` needs vitest's globals.
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  test: {
    globals: true,
    include: ['*.vitest.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
