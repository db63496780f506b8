import type { OpsContext } from '../context/context.js';

/** A compact UTC timestamp for names: 20260101T120000Z. */
function stamp(d: Date): string {
  return d
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
}

/** Where a checkout's file moved aside goes: `<branch>.db.aside-<time>-<pid>` (never over an earlier one). */
export function asidePathFor(ctx: OpsContext, path: string): string {
  return `${path}.aside-${stamp(ctx.now())}-${process.pid}`;
}
