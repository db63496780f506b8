// vitest.config.ts: evalite runs on Vitest and reads this file; the global setup seeds once, before any eval runs.
import { defineConfig } from 'vitest/config';

export default defineConfig({ test: { globalSetup: ['./offshoot.setup.ts'] } });
