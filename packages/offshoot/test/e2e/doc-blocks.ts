// The fenced blocks of a Markdown file as markdown-it parses them (the parser `make check` renders the docs with),
// each with the reason it is not run when the line before it is a `<!-- docs-test: not run (reason) -->` marker.
import { readFileSync } from 'node:fs';
import MarkdownIt from 'markdown-it';

/** One fenced block. */
export interface DocBlock {
  /** 1-based line of the opening fence. */
  line: number;
  /** The first word of the info string: `sh`, `python`, `json`, … */
  lang: string;
  code: string;
  /** Why the docs test does not run it, from its marker; undefined for a block it runs. */
  notRun: string | undefined;
}

/** Info strings of the blocks the docs test runs with bash. */
export const SHELL_LANGS = new Set(['sh', 'bash', 'shell']);

const MARKER = /^<!-- docs-test: not run \((.+)\) -->$/;

/** Every fenced block of the Markdown file at path, in order. */
export function docBlocks(path: string): DocBlock[] {
  const text = readFileSync(path, 'utf8');
  const lines = text.split('\n');
  return new MarkdownIt()
    .parse(text, {})
    .filter((t) => t.type === 'fence' && t.map !== null)
    .map((t) => {
      const start = t.map?.[0] ?? 0;
      const before = lines.slice(0, start).findLast((l) => l.trim() !== '') ?? '';
      return {
        line: start + 1,
        lang: t.info.trim().split(/\s+/)[0] ?? '',
        code: t.content,
        notRun: MARKER.exec(before.trim())?.[1],
      };
    });
}
