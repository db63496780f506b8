export {
  Client,
  connect,
  type EventsOptions,
  type ExportOptions,
  type CheckoutOptions,
  type ForceOptions,
  type ForkOptions,
  type TouchOptions,
} from './client.js';
export { sanitizeName } from './branch-name.js';
export type { Branch, CheckoutAtOptions, DestroyOptions, PromoteOptions } from './compat-types.js';
export type { ConnectOptions } from './dial.js';
export {
  DAEMON_ERROR_CODES,
  isOffshootError,
  OffshootError,
  type ClientErrorCode,
  type DaemonErrorCode,
  type ErrorCode,
  type OffshootErrorOptions,
} from './errors.js';
export { Session, type FlushOptions } from './session.js';
export { findOffshootBinary } from './testkit/find-binary.js';
export type {
  BranchInfo,
  BranchState,
  CheckpointInfo,
  DestroyResult,
  EventDetails,
  EventEnvelope,
  EventType,
  OffshootEvent,
  Op,
  PromoteResult,
  ProtectResult,
  RollbackResult,
  SessionInfo,
  TouchResult,
  UnreadableBranch,
  WireRequest,
  WireResponse,
} from './types.js';
