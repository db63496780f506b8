import { fail } from './errors.js';
import { parseMoment } from './moment.js';
import { validateName } from './names.js';

/** The default branch every database has. */
export const MAIN_BRANCH = 'main';

/** A parsed `db[@branch[@checkpoint]]` target; `checkpoint` may also be a moment (`tx:42`, `at:<RFC 3339>`). */
export interface Target {
  db: string;
  branch: string;
  checkpoint?: string;
}

/**
 * Checks what names a point of a branch where a checkpoint is taken: a checkpoint name, or a moment (`tx:42`,
 * `at:2026-12-07T10:00:00Z`), which no checkpoint name can be. Returns it as given.
 */
export function validatePointName(text: string): string {
  if (parseMoment(text) === undefined) validateName('checkpoint', text);
  return text;
}

/** Parses `db`, `db@branch` and (when allowed) `db@branch@checkpoint`; branch defaults to main. */
export function parseTarget(text: string, opts: { allowCheckpoint?: boolean } = {}): Target {
  const parts = text.split('@');
  const max = opts.allowCheckpoint ? 3 : 2;
  if (parts.length > max) {
    throw fail(
      'INVALID_ARGUMENT',
      `invalid target ${JSON.stringify(text)}: expected ${opts.allowCheckpoint ? 'db[@branch[@checkpoint]]' : 'db[@branch]'}`,
      {
        hint: opts.allowCheckpoint
          ? 'write the target as db, db@branch or db@branch@checkpoint (or @tx:42, @at:2026-12-07T10:00:00Z)'
          : 'write the target as db or db@branch',
      },
    );
  }
  const db = validateName('database', parts[0] ?? '');
  const branch = parts.length > 1 ? validateName('branch', parts[1] ?? '') : MAIN_BRANCH;
  const target: Target = { db, branch };
  if (parts.length > 2) target.checkpoint = validatePointName(parts[2] ?? '');
  return target;
}

/** Renders a target as `db@branch` (plus `@checkpoint` when present). */
export function formatTarget(t: Target): string {
  return t.checkpoint === undefined ? `${t.db}@${t.branch}` : `${t.db}@${t.branch}@${t.checkpoint}`;
}
