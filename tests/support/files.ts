import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** A fresh directory under the OS temp folder, removed by `remove()`. */
export function temporaryDirectory(prefix = 'svc-test-'): { path: string; remove(): void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  return { path: dir, remove: () => fs.rmSync(dir, { recursive: true, force: true }) };
}
