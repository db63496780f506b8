import { fail } from '../../core/errors.js';
import { create } from '../../ops/create.js';
import type { OpHandler } from './op-handler.js';

/** `create` db: a new database whose protected main branch starts empty. */
export const createOp: OpHandler = async (req, d) => {
  if (req.db === undefined || req.db === '')
    throw fail('INVALID_ARGUMENT', 'create: db is required', { hint: 'set "db" in the request' });
  await create(d.ops, req.db);
  return { ok: true };
};
