import type { BranchState } from '../ops/branch-view.js';
import type { OpsContext } from '../ops/context.js';
import type { EventEnvelope, SessionInfo } from '../protocol/wire.js';
import type { ApiSample } from './api-types.js';

/** A subscription to live events; closing it ends the iteration. */
export interface LiveSubscription extends AsyncIterable<EventEnvelope> {
  close(): void;
}

/** What a daemon adds to the dashboard: its sessions, its event stream and samples of its metrics. */
export interface LiveSource {
  sessions(): SessionInfo[];
  /** The state a daemon reports for a branch, given the at-rest one (error/pending come from its session table). */
  state(db: string, branch: string, atRest: BranchState): BranchState;
  subscribe(): LiveSubscription;
  /** Counter samples, oldest first, and the sampling interval. */
  series(): { intervalSeconds: number; samples: ApiSample[] };
}

/** Everything the dashboard reads from: the store through ops, and a daemon when one serves the page. */
export interface UiSource {
  ctx: OpsContext;
  /** The store spec as given (shown in the header; never used to choose a path). */
  storeLabel: string;
  version: string;
  live?: LiveSource;
}
