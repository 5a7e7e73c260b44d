// Argument parsing and table printing for the operator CLI.

export interface ParsedArguments {
  positional: string[];
  flags: Record<string, string | true>;
}

/** `--name value`, `--name=value` and bare `--flag`; everything else is positional. */
export function parseArguments(argv: readonly string[]): ParsedArguments {
  const positional: string[] = [];
  const flags: Record<string, string | true> = {};
  for (let index = 0; index < argv.length; index += 1) {
    const argument = argv[index];
    if (!argument.startsWith('--')) {
      positional.push(argument);
      continue;
    }
    const [name, inline] = argument.slice(2).split(/=(.*)/s, 2);
    if (inline !== undefined) flags[name] = inline;
    else if (index + 1 < argv.length && !argv[index + 1].startsWith('--')) flags[name] = argv[++index];
    else flags[name] = true;
  }
  return { positional, flags };
}

export function printTable(out: (line: string) => void, headers: string[], rows: Array<Array<string | number>>): void {
  const cells = [headers, ...rows.map((row) => row.map(String))];
  const widths = headers.map((_, column) => Math.max(...cells.map((row) => (row[column] ?? '').length)));
  for (const row of cells) out(row.map((cell, column) => cell.padEnd(widths[column])).join('  ').trimEnd());
  if (rows.length === 0) out('(none)');
}
