import { createHash } from 'node:crypto';

/** Runs of characters that cannot appear in a branch name; each becomes one `-`. */
const UNSAFE_RUN = /[^a-z0-9-]+/g;
const MAX_BODY = 40;
const HASH_HEX = 8;

function trimDashes(s: string): string {
  return s.replace(/^-+|-+$/g, '');
}

/**
 * Maps any id (a LangGraph thread id, a checkpoint id, a test title) to a branch-safe `[a-z0-9-]` name, the same
 * way the Python SDK does so either language maps an id to the same branch: lowercase, each run outside
 * `[a-z0-9-]` becomes `-`, edge dashes trimmed, the body capped at 40 characters (`id` when nothing is left), then
 * `-` and the first 8 hex digits of the SHA-256 of the original id's UTF-8 bytes (before lowercasing or
 * truncation), so ids that sanitize alike still get distinct names.
 */
export function sanitizeName(raw: string | number): string {
  const s = String(raw);
  const body = trimDashes(trimDashes(s.toLowerCase().replace(UNSAFE_RUN, '-')).slice(0, MAX_BODY)) || 'id';
  const digest = createHash('sha256').update(s, 'utf8').digest('hex').slice(0, HASH_HEX);
  return `${body}-${digest}`;
}
