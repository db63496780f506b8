import { defineConfig } from 'vitest/config';

// evalite runs on Vitest and reads this file: the global setup seeds once, before any eval file runs.
export default defineConfig({ test: { globalSetup: ['./offshoot.setup.ts'] } });
