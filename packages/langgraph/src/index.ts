export {
  type AtRestSaverOptions,
  type ForkThreadOptions,
  OffshootSaver,
  type SaverForceOptions,
  type SaverMergeOptions,
  type SessionSaverOptions,
} from './offshoot-saver.js';
export { type ThreadId, ThreadForks } from './thread-forks.js';
