import type { OpHandler } from './op-handler.js';

/** `dbs` → databases[], sorted (empty is fine). */
export const dbsOp: OpHandler = async (_req, d) => ({ ok: true, databases: [...(await d.ops.store.listDbs())].sort() });
