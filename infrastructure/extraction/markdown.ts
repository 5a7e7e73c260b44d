// Markdown to text: headings stay lines of their own (setext underlines become `#` / `##`
// lines), and the marks that are not words go: link and image addresses, emphasis, inline code
// ticks, HTML tags and comments, reference definitions, table rules, front matter. A fenced or
// indented code block keeps its lines, indented by four spaces so that a `# comment` in code
// is never taken for a heading.

import { headingLine, tidyText } from './tidy';

const FENCE = /^ {0,3}(`{3,}|~{3,})/;
const ATX_HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const SETEXT_UNDERLINE = /^ {0,3}(=+|-+)[ \t]*$/;
const REFERENCE_DEFINITION = /^ {0,3}\[[^\]]+\]:\s*\S+/;
/** The rule under a table's header row: dashes, colons and pipes only. */
const TABLE_RULE = /^(?=.*\|)(?=.*---)[\s|:-]+$/;
const TABLE_ROW = /^\s*\|.*\|\s*$/;
const LIST_ITEM = /^\s*([-*+]|\d+[.)])\s/;

/** The words of one line of Markdown prose. */
function inline(line: string): string {
  return line
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/!\[([^\]]*)\]\[[^\]]*\]/g, '$1')
    .replace(/\[([^\]]+)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]+)\]\[[^\]]*\]/g, '$1')
    .replace(/<(https?:\/\/[^>\s]+)>/g, '$1')
    .replace(/<\/?[A-Za-z][^>]*>/g, '')
    .replace(/(\*\*|__)(?=\S)(.+?)(?<=\S)\1/g, '$2')
    .replace(/(^|[^\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![\w*])/g, '$1$2')
    .replace(/(^|[^\w])_(?=\S)([^_\n]+?)(?<=\S)_(?!\w)/g, '$1$2')
    .replace(/~~(?=\S)(.+?)(?<=\S)~~/g, '$1')
    .replace(/`+([^`]+)`+/g, '$1')
    .replace(/\\([\\`*_{}[\]()#+\-.!|>~])/g, '$1');
}

export function markdownText(source: string): string {
  let text = source.replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n');
  // YAML front matter (`---` ... `---` at the very start) is metadata, not prose.
  text = text.replace(/^---\n[\s\S]*?\n(---|\.\.\.)\n/, '');
  text = text.replace(/<!--[\s\S]*?-->/g, '');
  const lines = text.split('\n');
  const out: string[] = [];
  let fence: string | null = null;
  for (let index = 0; index < lines.length; index += 1) {
    const line = lines[index];
    const fenceMatch = FENCE.exec(line);
    if (fence !== null) {
      if (fenceMatch && fenceMatch[1][0] === fence[0] && fenceMatch[1].length >= fence.length && line.trim() === fenceMatch[1]) fence = null;
      else out.push(line.trim() === '' ? '' : `    ${line}`);
      continue;
    }
    if (fenceMatch) {
      fence = fenceMatch[1];
      out.push('');
      continue;
    }
    // An indented code block: four spaces after a blank line (not a list's continuation).
    if (/^( {4}|\t)/.test(line) && (out.length === 0 || out[out.length - 1] === '' || out[out.length - 1].startsWith('    ')) && !LIST_ITEM.test(lines[index - 1] ?? '')) {
      out.push(line.trim() === '' ? '' : `    ${line.trim()}`);
      continue;
    }
    const atx = ATX_HEADING.exec(line);
    if (atx) {
      const words = inline(atx[2] ?? '').trim();
      if (words !== '') out.push('', headingLine(atx[1].length, words), '');
      continue;
    }
    const next = lines[index + 1];
    if (next !== undefined && line.trim() !== '' && SETEXT_UNDERLINE.test(next) && !LIST_ITEM.test(line)) {
      out.push('', headingLine(next.trim().startsWith('=') ? 1 : 2, inline(line.trim())), '');
      index += 1;
      continue;
    }
    if (REFERENCE_DEFINITION.test(line) || TABLE_RULE.test(line)) continue;
    // A thematic break (`***`, `- - -`) parts what is around it.
    if (/^ {0,3}([-*_])( *\1){2,} *$/.test(line)) {
      out.push('');
      continue;
    }
    let prose = line.replace(/^\s{0,3}>[ \t]?/, '');
    // A table row's cells, apart by ` | ` without the outer pipes.
    if (TABLE_ROW.test(prose)) prose = prose.trim().replace(/^\|\s*|\s*\|$/g, '').split(/\s*\|\s*/).join(' | ');
    out.push(inline(prose));
  }
  return tidyText(out.join('\n'));
}
