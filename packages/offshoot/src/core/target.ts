import { fail } from './errors.js';
import { validateName } from './names.js';

/** The default branch every database has. */
export const MAIN_BRANCH = 'main';

/** A parsed `db[@branch[@checkpoint]]` target. */
export interface Target {
  db: string;
  branch: string;
  checkpoint?: string;
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
          ? 'write the target as db, db@branch or db@branch@checkpoint'
          : 'write the target as db or db@branch',
      },
    );
  }
  const db = validateName('database', parts[0] ?? '');
  const branch = parts.length > 1 ? validateName('branch', parts[1] ?? '') : MAIN_BRANCH;
  const target: Target = { db, branch };
  if (parts.length > 2) target.checkpoint = validateName('checkpoint', parts[2] ?? '');
  return target;
}

/** Renders a target as `db@branch` (plus `@checkpoint` when present). */
export function formatTarget(t: Target): string {
  return t.checkpoint === undefined ? `${t.db}@${t.branch}` : `${t.db}@${t.branch}@${t.checkpoint}`;
}
