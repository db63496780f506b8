export { type OffshootTarget, type OffshootTools, type OffshootToolsOptions, offshootTools } from './offshoot-tools.js';
