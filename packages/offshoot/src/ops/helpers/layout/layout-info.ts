import { LAYOUT_VERSION, MERGED_LAYOUT_VERSION, SHARED_LAYOUT_VERSION } from '../../../store/manifest.js';

/** A store's layout as status shows it: the version, the newest this build writes, and what upgrading buys. */
export interface LayoutInfo {
  version: number;
  newest: number;
  /** What the layout allows and who reads it, in one line. */
  allows: string;
  /** What `offshoot upgrade` would buy, in one line; absent at the newest layout. */
  upgrade?: string;
}

/** What each layout allows, and which binaries read a store at it. */
function allows(version: number): string {
  if (version >= MERGED_LAYOUT_VERSION)
    return 'merged segments bound chains; the earlier implementation refuses the store';
  if (version >= SHARED_LAYOUT_VERSION)
    return 'copy-on-write forks, chains bounded by snapshots; the earlier implementation reads the store';
  return 'no base pointers yet (the first shared fork raises it to 2); every earlier binary reads the store';
}

/** A store's layout, what it allows, and what upgrading to the newest would buy. */
export function layoutInfo(version: number): LayoutInfo {
  return {
    version,
    newest: LAYOUT_VERSION,
    allows: allows(version),
    ...(version < LAYOUT_VERSION
      ? {
          upgrade:
            'offshoot upgrade: merged segments instead of a whole-database snapshot every few writes; the earlier ' +
            'implementation then refuses the store',
        }
      : {}),
  };
}
