import { nodeCrypto } from '../../../platform/node-crypto.js';
import { fail } from '../../../core/errors.js';
import type { Meta } from '../../../core/meta.js';
import type { Ref } from '../../../core/ref.js';

/** The kinds of undo point offshoot keeps, named `<branch>-<kind>`. */
export type UndoKind = 'pre-rollback' | 'pre-promote' | 'pre-merge' | 'pre-reopen';

/** Every kind, for the checks that recognise undo points by name. */
export const UNDO_KINDS: readonly UndoKind[] = ['pre-rollback', 'pre-promote', 'pre-merge', 'pre-reopen'];

/** The meta keys offshoot writes on every undo point it makes (every version has written them). */
export const UNDO_KIND_KEY = 'offshoot.safety';
/** The meta key naming the branch an undo point keeps the state of. */
export const UNDO_OF_KEY = 'offshoot.of';

/** How offshoot tagged a branch as an undo point: the kind it made, and the branch whose earlier state it keeps. */
export interface UndoTag {
  kind: string;
  of: string;
}

/** The undo-point tag offshoot wrote in a branch's meta (only offshoot may write `offshoot.*` keys), or undefined. */
export function undoTag(meta: Meta | undefined): UndoTag | undefined {
  const kind = meta?.[UNDO_KIND_KEY];
  return kind === undefined ? undefined : { kind, of: meta?.[UNDO_OF_KEY] ?? '' };
}

/** The longest name the engine stores, in bytes (names are ASCII). */
const NAME_CAP = 128;

/** The most undo points of one kind a branch is given (`<branch>-pre-reopen-<n>`, n up to this). */
export const MAX_UNDO_N = 10_000;

/** Undo-point names: `-<kind>`, optionally `-<n>` for the n-th kept checkout of a reopen. */
const RESERVED = /-(pre-rollback|pre-promote|pre-merge|pre-reopen)(-[0-9]+)?$/;

/** The tag that stands for the end of a branch name too long to take an undo-point suffix whole. */
const CUT_TAG = /_[0-9a-f]{8}$/;

/** The suffix of the n-th undo point of a kind. */
function suffixOf(kind: UndoKind, n: number): string {
  return `-${kind}${n > 1 ? `-${n}` : ''}`;
}

/** Every length a suffix can have (each kind, n of each digit count up to MAX_UNDO_N). */
const SUFFIX_LENGTHS: ReadonlySet<number> = new Set(
  UNDO_KINDS.flatMap((kind) => [1, 2, 10, 100, 1_000, MAX_UNDO_N].map((n) => suffixOf(kind, n).length)),
);

/**
 * The name of a branch's undo point of a kind: `<branch>-<kind>`, then `-<n>` for n > 1. A branch too long for that
 * within the 128-byte cap keeps the suffix whole and gives up the end of its own name for `_<8 hex of its SHA-256>`,
 * so two long branches never share an undo point and the name still reads as an undo point. Every check of an undo
 * point's name goes through here.
 */
export function undoPointName(branch: string, kind: UndoKind, n = 1): string {
  const suffix = suffixOf(kind, n);
  if (branch.length + suffix.length <= NAME_CAP) return `${branch}${suffix}`;
  const tag = `_${nodeCrypto().createHash('sha256').update(branch).digest('hex').slice(0, 8)}`;
  return `${branch.slice(0, NAME_CAP - suffix.length - tag.length)}${tag}${suffix}`;
}

/** Whether a name has the undo-point form, which only offshoot may give a new branch. */
export function isUndoPointForm(name: string): boolean {
  return RESERVED.test(name);
}

/**
 * Whether a name is what undoPointName cuts a long branch to before the suffix (`<start>_<8 hex>`, exactly as long
 * as leaves room for one): a branch of that name would have the undo points of the long one as its own.
 */
export function isCutUndoPointStem(name: string): boolean {
  return CUT_TAG.test(name) && SUFFIX_LENGTHS.has(NAME_CAP - name.length);
}

/**
 * Refuses a new branch named like an undo point, or like the cut name of a long branch's undo points (which would
 * then be its own): those names are offshoot's, on every surface.
 */
export function refuseReservedName(db: string, name: string): void {
  if (isUndoPointForm(name))
    throw fail('INVALID_NAME', `${db}@${name} has the form of an undo point, a name offshoot keeps for itself`, {
      hint: 'pick a name that does not end in -pre-rollback, -pre-promote, -pre-merge or -pre-reopen',
    });
  if (isCutUndoPointStem(name))
    throw fail(
      'INVALID_NAME',
      `${db}@${name} has the form offshoot cuts a long branch's name to for its undo points (ending in "_" and 8 hex digits, ${name.length} characters), a name it keeps for itself`,
      { hint: 'pick a shorter name, or one that does not end in "_" and 8 hex digits' },
    );
}

/**
 * The branch whose undo point `name` is, when it is one: by the meta offshoot writes on every undo point (every
 * version), else by name (`<branch>-<kind>[-n]`; a name cut to the cap carries a hash, not the branch, and is known
 * by its meta alone).
 */
export function undoPointOrigin(name: string, ref: Ref | undefined): string | undefined {
  const tagged = ref?.meta?.[UNDO_OF_KEY];
  if (tagged !== undefined && ref?.meta?.[UNDO_KIND_KEY] !== undefined) return tagged;
  const m = RESERVED.exec(name);
  return m === null ? undefined : name.slice(0, m.index);
}
