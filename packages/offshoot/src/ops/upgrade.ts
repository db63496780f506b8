import { fail } from '../core/errors.js';
import { LAYOUT_VERSION, MIN_LAYOUT_VERSION } from '../store/manifest.js';
import type { OpsContext } from './helpers/context/context.js';
import { type LayoutInfo, layoutInfo } from './helpers/layout/layout-info.js';

/** What `offshoot upgrade` did: the layout before and after, and what the store's layout now allows. */
export interface UpgradeResult {
  store: string;
  from: number;
  to: number;
  /** False when the store was already at the layout asked for (the command is idempotent). */
  upgraded: boolean;
  layout: LayoutInfo;
}

/**
 * `offshoot upgrade [--to N]`: raises the store's layout to N (the newest this build writes by default) by
 * compare-and-swap on the manifest, one way. A store already at N is left as it is; one past N is refused, since a
 * layout is never lowered (objects a newer layout allows may already be in the store). Writers that share the store
 * read the manifest again before they next compact a chain, and use what the new layout allows from then on.
 */
export async function upgrade(ctx: OpsContext, opts: { to?: number } = {}): Promise<UpgradeResult> {
  const to = opts.to ?? LAYOUT_VERSION;
  if (!Number.isInteger(to) || to < MIN_LAYOUT_VERSION || to > LAYOUT_VERSION)
    throw fail(
      'INVALID_ARGUMENT',
      `layout ${to} is not one this build writes (${MIN_LAYOUT_VERSION} to ${LAYOUT_VERSION})`,
      {
        hint: `pass --to ${LAYOUT_VERSION}, or leave it out for ${LAYOUT_VERSION}`,
      },
    );
  const { from, to: now } = await ctx.store.raiseLayout(to);
  if (from > to)
    throw fail(
      'INVALID_ARGUMENT',
      `store ${ctx.store.spec.text} is at layout ${from}; a layout is never lowered to ${to}`,
      {
        hint:
          `to give a database to a binary that reads layout ${to}, export it (offshoot export) into a store made with ` +
          `'offshoot init --layout ${to}' and run 'offshoot create <db> --from <file>' there`,
      },
    );
  return { store: ctx.store.spec.text, from, to: now, upgraded: now > from, layout: layoutInfo(now) };
}
