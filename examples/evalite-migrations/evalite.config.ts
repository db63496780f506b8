import { defineConfig } from 'evalite/config';
import { createInMemoryStorage } from 'evalite/in-memory-storage';

// Results stay in memory: this example keeps nothing but what --outputPath asks for.
export default defineConfig({ storage: () => createInMemoryStorage(), maxConcurrency: 3 });
