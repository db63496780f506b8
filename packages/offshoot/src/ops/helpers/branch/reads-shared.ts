import type { BasePointer } from '../../../core/ref.js';
import type { Store } from '../../../store/store.js';

/** A branch as readsShared sees it: its name, its own lineage and the base pointer it reads through, from its ref. */
export interface BranchLineage {
  branch: string;
  lineage: string;
  base?: BasePointer | undefined;
}

/**
 * The shared branches of one database that read objects another of its branches reads too: those whose base pointers
 * reach another branch's own lineage, or pass through a lineage no branch owns (its branch was destroyed, reaped,
 * rolled back or promoted onto) that another branch's pointers pass through as well. A shared branch left out reads
 * through objects no other branch reads: its sources are gone, and it holds what it reads alone. A lineage no branch
 * owns is followed through its stored base pointer, read once however many branches pass through it.
 */
export async function readsShared(store: Store, branches: readonly BranchLineage[]): Promise<Set<string>> {
  const owned = new Set(branches.map((b) => b.lineage));
  const bases = new Map<string, Promise<string | undefined>>();
  const baseOf = (lineage: string): Promise<string | undefined> => {
    let got = bases.get(lineage);
    if (got === undefined) bases.set(lineage, (got = store.readBase(lineage).then((b) => b?.lineage)));
    return got;
  };
  // For each unowned lineage, the branches whose pointers pass through it.
  const passers = new Map<string, Set<string>>();
  const walks = new Map<string, Set<string>>();
  const out = new Set<string>();
  await Promise.all(
    branches.map(async (b) => {
      const walk = new Set<string>();
      walks.set(b.branch, walk);
      let lineage = b.base?.lineage;
      while (lineage !== undefined && lineage !== b.lineage && !walk.has(lineage)) {
        if (owned.has(lineage)) {
          out.add(b.branch);
          return;
        }
        walk.add(lineage);
        let by = passers.get(lineage);
        if (by === undefined) passers.set(lineage, (by = new Set()));
        by.add(b.branch);
        lineage = await baseOf(lineage);
      }
    }),
  );
  for (const [branch, walk] of walks) if ([...walk].some((l) => (passers.get(l)?.size ?? 0) > 1)) out.add(branch);
  return out;
}
