export { type OffshootSetupOptions, offshootSetup } from './offshoot-setup.js';
export { type WithForkOptions, withFork } from './with-fork.js';
export type { TestFork } from '@offshoot/client/testkit';
