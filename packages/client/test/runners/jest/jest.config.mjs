// ESM test files with no transform; run with NODE_OPTIONS=--experimental-vm-modules (jest's ESM mode).
export default {
  rootDir: new URL('.', import.meta.url).pathname,
  testMatch: ['**/*.jest.mjs'],
  transform: {},
  globalSetup: './global-setup.mjs',
  globalTeardown: './global-teardown.mjs',
  maxWorkers: 2,
};
