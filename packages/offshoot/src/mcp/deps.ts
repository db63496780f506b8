import type { TtlArg } from '../core/duration.js';
import { type OpsContext, type ProgressSink, withOrigin } from '../ops/context.js';
import type { Origin } from '../core/history.js';
import type { Actor } from '../ops/policy.js';
import type { DaemonLinks } from './daemon/daemon-links.js';

/** How `offshoot mcp` was started. */
export interface McpOptions {
  /** Applied to a fork that names no ttl (`-default-ttl`, 24h unless disabled). */
  defaultTtl: Exclude<TtlArg, { kind: 'keep' }>;
  /** `-allow-force`: the human lets the agent force past protection (off by default). */
  allowForce: boolean;
  /** `-confirm-force`: a refused forced call asks the host's human through an elicitation (off by default). */
  confirmForce: boolean;
  /** The daemon socket tools ride when a daemon answers there. */
  socket: string;
  /** True when -socket or OFFSHOOT_SOCKET named it: then no other daemon is looked for. */
  socketExplicit: boolean;
  /** `-reap-every` in ms; 0 disables the background reap. */
  reapEveryMs: number;
  /** `-query-timeout` in ms for offshoot_query. */
  queryTimeoutMs: number;
}

/** What the MCP request behind a tool call offers: cancellation and, when the client asked, progress. */
export interface CallControl {
  /** Aborted when the client cancels the call (or the connection goes). */
  signal: AbortSignal;
  /** The ops' progress sink: it stops the work once the call is cancelled, and reports when the client asked. */
  progress: () => ProgressSink;
  /** Marks the start of one coarse step (throwing if cancelled), reported when the client asked for progress. */
  step(message: string): void;
}

/** What every tool gets: the options, the store (opened on first use), and a place for notes. */
export interface McpDeps {
  options: McpOptions;
  /** Who asks: the agent, allowed to force when the human started the server with -allow-force or confirmed this call. */
  actor: Actor;
  /** The agent, through this tool (`mcp:<tool>`): what the records of the branch log say of this call. */
  origin: Origin;
  /** The ops context for one call; its warnings land in `notes` instead of on stderr, its progress goes to the client. */
  ops(): Promise<OpsContext>;
  /** Warnings the ops raised during this call, shown in the tool's prose. */
  notes: string[];
  /** True on the second run of a call the host's human confirmed: the actor may then force, once. */
  confirmed: boolean;
  /** Cancellation and progress of this call. */
  control: CallControl;
  /** The daemon connections kept between calls, shared by every call of this server. */
  links: DaemonLinks;
}

/** Builds the per-call deps around a store opener and daemon links shared by every call. */
export function callDeps(
  options: McpOptions,
  tool: string,
  open: () => Promise<OpsContext>,
  links: DaemonLinks,
  control: CallControl,
  confirmed = false,
): McpDeps {
  const notes: string[] = [];
  const origin: Origin = { actor: 'agent', surface: `mcp:${tool}` };
  return {
    options,
    actor: { kind: 'agent', allowForce: options.allowForce || confirmed },
    origin,
    notes,
    confirmed,
    control,
    links,
    ops: async () => {
      const ctx = withOrigin(await open(), origin);
      ctx.warn = (m: string) => void notes.push(m);
      ctx.progress = control.progress;
      return ctx;
    },
  };
}
