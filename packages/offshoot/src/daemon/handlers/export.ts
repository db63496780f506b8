import { isAbsolute } from 'node:path';
import { fail } from '../../core/errors.js';
import { exportTo } from '../../ops/export.js';
import { optionalPoint, requestTarget } from '../request-fields.js';
import type { OpHandler } from './op-handler.js';

/**
 * `export` db, branch, name=cp ("" = head), path, force: writes durable state to a file on the daemon host. The
 * path must be absolute (the daemon's working directory means nothing to a client), and HTTP may not use it.
 */
export const exportOp: OpHandler = async (req, d, transport) => {
  if (transport === 'http')
    throw fail('UNSUPPORTED', 'export is refused over HTTP', {
      hint: 'run export over the unix socket on the daemon host',
    });
  const t = requestTarget(req);
  const checkpoint = optionalPoint(req);
  if (req.path === undefined || req.path === '')
    throw fail('INVALID_ARGUMENT', 'export: path is required', { hint: 'set "path" to an absolute file path' });
  if (!isAbsolute(req.path))
    throw fail('INVALID_ARGUMENT', `export: path ${JSON.stringify(req.path)} must be absolute`, {
      hint: 'pass an absolute file path',
    });
  const r = await exportTo(d.ops, checkpoint === undefined ? t : { ...t, checkpoint }, req.path, {
    force: req.force ?? false,
  });
  return { ok: true, txid: r.txid };
};
