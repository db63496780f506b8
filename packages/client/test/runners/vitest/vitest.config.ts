import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// One daemon and one seed per run (global setup); each worker's tests fork it through the `fork` fixture.
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  test: {
    include: ['*.spec.ts'],
    globalSetup: ['./global-setup.ts'],
    maxWorkers: 2,
    fileParallelism: true,
  },
});
