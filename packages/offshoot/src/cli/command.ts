import type { Actor } from '../ops/policy.js';
import type { OffshootError } from '../core/errors.js';
import type { OpsContext } from '../ops/context.js';
import type { StoreSpec } from '../store/store-spec.js';
import type { Origin } from '../core/history.js';

/** One flag a command accepts; every flag is spelled `-name` or `--name`, with `--name=value` for values. */
export interface FlagSpec {
  type: 'string' | 'boolean';
  /** A value flag that may be given more than once (`--meta a=1 --meta b=2`). */
  multiple?: boolean;
  /** Placeholder for the value in help (`CP`, `DURATION`). */
  value?: string;
  description: string;
}

/** Flag values as parsed, read through typed accessors. */
export interface FlagValues {
  string(name: string): string | undefined;
  boolean(name: string): boolean;
  list(name: string): string[];
}

/** Output flags every command accepts (-store is taken out of argv before parsing). */
export interface GlobalOptions {
  json: boolean;
  quiet: boolean;
}

/** Everything a command's run gets: its arguments and flags, and the store on demand. */
export interface Invocation {
  /** Positional arguments, arity already checked against the command's declaration. */
  args: string[];
  flags: FlagValues;
  /** The positional argument at i; the arity check guarantees the required ones exist. */
  arg(i: number): string;
  /** The store spec from -store, $OFFSHOOT_STORE or ./.offshoot. */
  storeSpec(): StoreSpec;
  /** True when -store or $OFFSHOOT_STORE named the store, false for the ./.offshoot default. */
  storeNamed: boolean;
  /** Opens the store (once per invocation, closed by the runner) and returns the ops context. */
  context(): Promise<OpsContext>;
  /** Who asks (the global --actor and --allow-force): passed to every destructive verb. */
  actor: Actor;
  /** Who asks and through what, for the branch log (--actor, OFFSHOOT_SURFACE, OFFSHOOT_ACTOR_META). */
  origin(): Origin;
  /** The global --json was given. */
  json: boolean;
  /** Writes to stdout as the command runs (a listing too big to hold), waiting while the reader falls behind. */
  print(text: string): Promise<void>;
}

/** What a command produced: the JSON document for --json, the stdout text otherwise, and stderr notes. */
export interface Outcome {
  data: unknown;
  /** Human stdout; empty for commands that print nothing. */
  text: string;
  /** Informational lines for stderr (suppressed by --quiet and --json). */
  notes?: string[];
  /** Partial failures that did not stop the command; always printed on stderr in text mode. */
  problems?: string[];
  /** Warnings the caller must see (kept data, say): always printed on stderr, as JSON lines under --json. */
  warnings?: string[];
  /**
   * The command did its work but did not fully succeed (a rollback whose checkout stayed stale): the output is
   * printed, then this error's line, and the exit code is the error's.
   */
  failure?: OffshootError;
  /** The exit code when the command finished but found a failure worth a script's attention (default 0). */
  exitCode?: number;
  /**
   * Maintenance that runs once the outcome is printed (a chain merge after a checkpoint): the command's result is
   * already reported, so a failure here is a warning on stderr and never changes the exit code.
   */
  afterward?: () => Promise<void>;
  /** The command already wrote its stdout through `print` (text and --json alike); the runner adds only stderr. */
  printed?: true;
}

/** A leaf command: its declaration (for parsing and help) and its run. */
export interface Command {
  /** Full name as typed, e.g. `fork` or `lease acquire`. */
  name: string;
  summary: string;
  /** Arguments and flags after the name, for the usage line. */
  usage: string;
  /** Paragraphs shown by `offshoot <name> --help` below the usage line. */
  help: string;
  /** Command lines shown under `examples:` in the help page, as a user would type them. */
  examples: string[];
  flags: Record<string, FlagSpec>;
  args: { min: number; max: number };
  /** The command may fill checkouts-ro/: it declares --ro-cache-budget and the runner trims the cache afterwards. */
  fillsRoCache?: true;
  run(inv: Invocation): Promise<Outcome>;
}

/** A command with subcommands (`lease list|acquire|release`). */
export interface CommandGroup {
  name: string;
  summary: string;
  subcommands: Command[];
}
