import type { Target } from '../../../core/target.js';

/** A note's file name for a branch: `<db>@<branch>`, each URI-encoded (which encodes `@`), so it parses back. */
export function targetNoteName(t: Target): string {
  return `${encodeURIComponent(t.db)}@${encodeURIComponent(t.branch)}`;
}

/** The branch a note's file name names, or undefined for a name no note has. */
export function parseTargetNote(name: string): Target | undefined {
  const at = name.indexOf('@');
  if (at < 0) return undefined;
  try {
    return { db: decodeURIComponent(name.slice(0, at)), branch: decodeURIComponent(name.slice(at + 1)) };
  } catch {
    return undefined;
  }
}
