import type { Target } from '../../../core/target.js';

/**
 * What the verbs need of the ephemeral forks a daemon holds (docs/architecture.md, Ephemeral forks): absent from a
 * context outside a daemon, where none can be made or seen.
 */
export interface EphemeralHost {
  /** Whether db@branch is an ephemeral fork held here. */
  holds(db: string, branch: string): boolean;
  /** Whether a lineage's objects are held here (a chain with such a member is an ephemeral state). */
  holdsLineage(lineage: string): boolean;
  /** Holds db@branch's ref from now on: the fork about to be written is ephemeral. */
  hold(db: string, branch: string): void;
  /** A fresh lineage id, held from now on: everything written under it stays in the daemon. */
  newLineage(): string;
  /** Lets go of what a fork that failed held: the ref (unless it was written) and the fresh lineages. */
  release(db: string, branch: string, lineages: readonly string[]): void;
  /**
   * Keeps t when it is ephemeral: writes its objects, base pointer and ref to the store (it is an ordinary durable
   * branch from then on) and makes its checkout durable. Returns whether it was ephemeral.
   */
  keep(t: Target): Promise<boolean>;
  /** Resolves once GC is told of every durable state the held forks stand on (a liveness write, only for a new one). */
  pinned(): Promise<void>;
  /** Notes that an ephemeral fork's checkout is about to be made, so a restarted daemon finds and removes it. */
  checkingOut(db: string, branch: string): void;
}
