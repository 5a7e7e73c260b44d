// The operator CLI as a separate process on a data folder, as an operator runs it (the built
// dist/adapters/cli/main.js), its exit code and its two outputs.

import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
/** The built CLI's entry point. */
export const CLI = path.join(__dirname, '..', '..', 'adapters', 'cli', 'main.js');

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `npm run cli -- ...args` (without npm) with DATA_DIR `dataDir` and the logs off. */
export function cli(dataDir: string, ...args: string[]): Promise<CliRun> {
  return cliWith({ DATA_DIR: dataDir, LOG_LEVEL: 'silent' }, ...args);
}

/** The same with these environment variables set (over the test's own). */
export async function cliWith(env: Record<string, string>, ...args: string[]): Promise<CliRun> {
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, ...args], { env: { ...process.env, ...env } });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}
