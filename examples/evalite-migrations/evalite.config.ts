// evalite.config.ts: results stay in memory; this example keeps nothing but what --outputPath asks for.
import { defineConfig } from 'evalite/config';
import { createInMemoryStorage } from 'evalite/in-memory-storage';

export default defineConfig({ storage: () => createInMemoryStorage(), maxConcurrency: 3 });
