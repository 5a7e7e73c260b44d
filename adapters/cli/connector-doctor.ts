// `npm run cli -- connector doctor URL --secret S`: probes a connector endpoint against the
// connector protocol and prints each check, with a fix hint for every failure. A thin
// adapter over the SDK's `runConnectorChecks`, which the platform reuses for its own tests.
import { SIGNING_SECRET_ENV, runConnectorChecks, type DoctorCheckResult } from '../connector-sdk';

export { runConnectorChecks };
export type { DoctorCheckResult };

const USAGE = [
  'usage: connector doctor <endpoint-url> [--secret <signing-secret>] [--timeout <ms>]',
  '  <endpoint-url>  full endpoint URL including the path, e.g. https://connector.example.com/svc',
  `  --secret        the SDK Connection's signing secret (default: $${SIGNING_SECRET_ENV})`,
  '  --timeout       per-probe timeout in milliseconds (default 10000)',
];

interface DoctorArguments {
  url: string;
  secret: string;
  timeoutMs: number | undefined;
}

/** Parses `URL --secret S [--timeout MS]` (also `--secret=S`); returns a usage problem as a string. */
export function parseDoctorArguments(argv: readonly string[], env: Readonly<Record<string, string | undefined>> = process.env): DoctorArguments | string {
  const positional: string[] = [];
  const flags = new Map<string, string>();
  for (let index = 0; index < argv.length; index++) {
    const argument = argv[index];
    if (!argument.startsWith('--')) {
      positional.push(argument);
      continue;
    }
    const equals = argument.indexOf('=');
    const name = equals === -1 ? argument.slice(2) : argument.slice(2, equals);
    if (name === 'help') return '';
    if (name !== 'secret' && name !== 'timeout') return `unknown option --${name}`;
    const value = equals === -1 ? argv[++index] : argument.slice(equals + 1);
    if (value === undefined || value === '') return `--${name} needs a value`;
    flags.set(name, value);
  }
  if (positional.length !== 1) return positional.length === 0 ? 'missing endpoint URL' : `unexpected argument ${positional[1]}`;
  let url: URL;
  try {
    url = new URL(positional[0]);
  } catch {
    return `not a URL: ${positional[0]}`;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return `unsupported URL scheme ${url.protocol}`;
  const secret = flags.get('secret') ?? env[SIGNING_SECRET_ENV];
  if (secret === undefined || secret === '') return `missing --secret (or ${SIGNING_SECRET_ENV})`;
  const timeout = flags.get('timeout');
  const timeoutMs = timeout === undefined ? undefined : Number(timeout);
  if (timeoutMs !== undefined && (!Number.isInteger(timeoutMs) || timeoutMs <= 0)) return `--timeout must be a positive number of milliseconds`;
  return { url: url.toString(), secret, timeoutMs };
}

/** Prints one line per check (and a hint under each failure). */
export function formatDoctorReport(url: string, results: readonly DoctorCheckResult[]): string[] {
  const lines = [`connector doctor: ${url}`];
  for (const result of results) {
    lines.push(`  ${result.passed ? 'PASS' : 'FAIL'}  ${result.name}: ${result.detail}`);
    if (!result.passed) lines.push(`        hint: ${result.hint}`);
  }
  const passed = results.filter((result) => result.passed).length;
  lines.push(passed === results.length ? `all ${results.length} checks passed` : `${results.length - passed} of ${results.length} checks failed`);
  return lines;
}

/** Runs the connector doctor for CLI arguments; returns the exit code (0 all passed, 1 a check failed, 2 usage). */
export async function runConnectorDoctor(argv: string[], out: (line: string) => void): Promise<number> {
  const parsed = parseDoctorArguments(argv);
  if (typeof parsed === 'string') {
    if (parsed !== '') out(`connector doctor: ${parsed}`);
    USAGE.forEach((line) => out(line));
    return parsed === '' ? 0 : 2;
  }
  const results = await runConnectorChecks({ url: parsed.url, secret: parsed.secret, timeoutMs: parsed.timeoutMs });
  formatDoctorReport(parsed.url, results).forEach((line) => out(line));
  return results.every((result) => result.passed) ? 0 : 1;
}
