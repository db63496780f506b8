export { type CliTarget, runCli } from './at-rest-cli.js';
export { AtRestLink } from './at-rest-link.js';
export type {
  BranchLink,
  BranchPlace,
  CheckoutReport,
  CheckRequest,
  DestroyReport,
  ForkReport,
  ForkRequest,
  LinkForkOptions,
  MergeReport,
  PlaceMergeOptions,
  PlacePromoteOptions,
  PromoteReport,
  RollbackReport,
} from './branch-place.js';
export { DaemonPlace } from './daemon-place.js';
export { SessionLink } from './session-link.js';
export { StorePlace } from './store-place.js';
export {
  type ActorOptions,
  type CheckpointOptions,
  Client,
  connect,
  type DiffOptions,
  type EventsOptions,
  type ExportOptions,
  type CheckoutOptions,
  type ForceOptions,
  type PromoteOptions,
  type MergeOptions,
  type ForkOptions,
  type LogOptions,
  type QueryOptions,
  type TouchOptions,
} from './client.js';
export { sanitizeName } from './branch-name.js';
export { Episode, type EpisodeOptions, type EpisodeResult } from './episode.js';
export type { Branch, CheckoutAtOptions, DestroyOptions } from './compat-types.js';
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
export { MAX_RESPONSE_BYTES } from './wire-codec.js';
export { findOffshootBinary } from './testkit/find-binary.js';
export type {
  BranchInfo,
  BranchState,
  CheckedVerb,
  CheckoutResult,
  CheckpointInfo,
  CheckResult,
  CheckpointReport,
  DestroyResult,
  DiscardedWork,
  DiffReport,
  DiffRow,
  DiffValue,
  EventDetails,
  EventEnvelope,
  EventType,
  LogRecord,
  LogReport,
  ForkResult,
  MergeConflict,
  MergeResult,
  OffshootEvent,
  Op,
  PromoteResult,
  ProtectResult,
  QueryResult,
  ResolvedRow,
  RollbackResult,
  SessionInfo,
  TableDiff,
  TouchResult,
  UnreadableBranch,
  WireBranchInfo,
  WireCheckpointInfo,
  WireOrigin,
  WireRequest,
  WireResponse,
} from './types.js';
