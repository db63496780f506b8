import { validateName } from '../core/names.js';
import { storageUsage } from '../ops/gc.js';
import { layoutInfo } from '../ops/status.js';
import type { ApiStorage } from './api-types.js';
import { serverInfo } from './tree-api.js';
import type { UiSource } from './ui-source.js';

/** GET /api/storage (and /api/dbs/:db/storage, narrowed to one database): bytes, pins and what GC would reclaim. */
export async function storageReport(src: UiSource, db?: string): Promise<ApiStorage> {
  if (db !== undefined) validateName('database', db);
  const [u, layout] = await Promise.all([storageUsage(src.ctx), src.ctx.store.refreshLayout()]);
  return {
    server: serverInfo(src),
    ...(db !== undefined ? { db } : {}),
    total_bytes: u.totalBytes,
    dbs: u.dbs.filter((d) => db === undefined || d.db === db),
    lineages: u.lineages
      .filter((l) => db === undefined || l.dbs.includes(db))
      .map((l) => ({ lineage: l.lineage, dbs: l.dbs, objects: l.objects, bytes: l.bytes, live_bytes: l.liveBytes })),
    branches: u.branches
      .filter((b) => db === undefined || b.db === db)
      .map((b) => ({
        db: b.db,
        branch: b.branch,
        pinned_objects: b.pinnedObjects,
        pinned_bytes: b.pinnedBytes,
        unique_bytes: b.uniqueBytes,
      })),
    reclaimable: u.reclaimable,
    layout: layoutInfo(layout),
  };
}
