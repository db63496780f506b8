import type { TtlArg } from '../core/duration.js';
import type { OpsContext } from '../ops/helpers/context/context.js';
import type { Actor } from '../ops/helpers/safety/policy.js';

/** How `offshoot mcp` was started. */
export interface McpOptions {
  /** Applied to a fork that names no ttl (`-default-ttl`, 24h unless disabled). */
  defaultTtl: Exclude<TtlArg, { kind: 'keep' }>;
  /** `-allow-force`: the human lets the agent force past protection (off by default). */
  allowForce: boolean;
  /** The daemon socket tools ride when a daemon answers there. */
  socket: string;
  /** `-reap-every` in ms; 0 disables the background reap. */
  reapEveryMs: number;
  /** `-query-timeout` in ms for offshoot_query. */
  queryTimeoutMs: number;
}

/** What every tool gets: the options, the store (opened on first use), and a place for notes. */
export interface McpDeps {
  options: McpOptions;
  /** Who asks: the agent, allowed to force when the human started the server with -allow-force. */
  actor: Actor;
  /** The ops context for one call; its warnings land in `notes` instead of on stderr. */
  ops(): Promise<OpsContext>;
  /** Warnings the ops raised during this call, shown in the tool's prose. */
  notes: string[];
}

/** Builds the per-call deps around a store opener shared by every call. */
export function callDeps(options: McpOptions, open: () => Promise<OpsContext>): McpDeps {
  const notes: string[] = [];
  return {
    options,
    actor: { kind: 'agent', allowForce: options.allowForce },
    notes,
    ops: async () => ({ ...(await open()), warn: (m: string) => void notes.push(m) }),
  };
}
