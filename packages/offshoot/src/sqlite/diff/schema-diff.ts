import type { SchemaChange } from './diff-types.js';
import { objectKey, type SchemaCatalog } from './schema-catalog.js';

/**
 * Compares two schemas object by object (type and name), by exact DDL text. Removals come in left schema order,
 * then additions and changes in right schema order, so creating objects in array order respects dependencies.
 */
export function diffSchema(left: SchemaCatalog, right: SchemaCatalog): SchemaChange[] {
  const changes: SchemaChange[] = [];
  for (const l of left.objects) {
    if (!right.byKey.has(objectKey(l.type, l.name)))
      changes.push({ type: l.type, name: l.name, change: 'removed', left: l.sql });
  }
  for (const r of right.objects) {
    const l = left.byKey.get(objectKey(r.type, r.name));
    if (l === undefined) changes.push({ type: r.type, name: r.name, change: 'added', right: r.sql });
    else if (l.sql !== r.sql)
      changes.push({ type: r.type, name: r.name, change: 'changed', left: l.sql, right: r.sql });
  }
  return changes;
}
