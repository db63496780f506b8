import fs from 'node:fs';
import path from 'node:path';
import { openDatabase } from '../../src/sqlite/sqlite-driver.js';

/** A copy of base named name in dir with sql applied in rollback-journal mode, so every change lands in the file. */
export function forkFile(base: string, dir: string, name: string, sql: string): string {
  const file = path.join(dir, `${name}.db`);
  fs.copyFileSync(base, file);
  const db = openDatabase(file);
  db.pragma('synchronous = OFF');
  db.exec(sql);
  db.close();
  return file;
}

/** Page numbers whose bytes differ between two files, as LTX chains would report them; pages past one's end count. */
export function changedPages(a: string, b: string, pageSize: number): Set<number> {
  const x = fs.readFileSync(a);
  const y = fs.readFileSync(b);
  const pages = new Set<number>();
  const count = Math.ceil(Math.max(x.length, y.length) / pageSize);
  for (let p = 0; p < count; p++) {
    const s = p * pageSize;
    if (!x.subarray(s, s + pageSize).equals(y.subarray(s, s + pageSize))) pages.add(p + 1);
  }
  return pages;
}
