import { fail } from '../core/errors.js';
import { validateName } from '../core/names.js';
import { validatePointName } from '../core/target.js';
import { mergePreviewToJson, previewMerge } from '../ops/merge.js';
import type { ApiMerge } from './api-types.js';
import { serverInfo } from './tree-api.js';
import type { UiSource } from './ui-source.js';

/** One required name parameter of the merge preview's query. */
function nameParam(q: URLSearchParams, name: string): string {
  const v = q.get(name);
  if (v === null || v === '')
    throw fail('INVALID_ARGUMENT', `the ${name} parameter is missing`, {
      hint: 'pass db=, source= and into=, e.g. /api/merge?db=app&source=attempt&into=main',
    });
  return v;
}

/**
 * `GET /api/merge?db=&source=&into=[&at=]`: what `offshoot merge db@source[@at] --into into` would do, computed on the
 * durable heads and written nowhere (ops' previewMerge): the conflicts, the rows taken from the source and the
 * target's own changes it keeps.
 */
export async function mergePreview(src: UiSource, q: URLSearchParams): Promise<ApiMerge> {
  const db = validateName('database', nameParam(q, 'db'));
  const source = validateName('branch', nameParam(q, 'source'));
  const into = validateName('branch', nameParam(q, 'into'));
  const at = q.get('at');
  const target = { db, branch: source, ...(at !== null && at !== '' ? { checkpoint: validatePointName(at) } : {}) };
  const r = mergePreviewToJson(await previewMerge(src.ctx, target, into));
  return { server: serverInfo(src), ...r };
}
