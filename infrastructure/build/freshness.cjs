// Whether `dist/` was built from the sources as they are. The npm scripts that run the platform
// (`start`, `cli`, `bench`, `example:connector`, `connector-manager`) run `npm run build`
// first only when it was not: an operator's `npm run cli -- tenants list` then starts in under
// a second instead of paying the compiler and the widget bundle every time. `npm test` still
// builds every time.
//
//   node infrastructure/build/freshness.cjs             exit 0 when dist/ is fresh, 1 when a build is needed
//   node infrastructure/build/freshness.cjs --starting  the first step of `npm run build`: notes when it began
//   node infrastructure/build/freshness.cjs --built     its last step: records that build as finished
//
// Plain CommonJS, so that it runs before anything is compiled. A build is needed when no
// finished build is recorded, or when a source, a compiler setting or the installed
// dependencies changed after the recorded build began (a file edited while it ran counts as
// changed; a build that failed records nothing).

'use strict';

const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '../..');
const STARTING = path.join(ROOT, 'dist', '.build-starting.json');
const RECORD = path.join(ROOT, 'dist', '.build-record.json');
/** What the compiler reads: the folders tsconfig.json includes, its settings, and what npm installed. */
const SOURCES = ['domain', 'application', 'projections', 'adapters', 'infrastructure', 'tests', 'bench'];
const SETTINGS = ['tsconfig.json', 'package.json', 'package-lock.json', path.join('node_modules', '.package-lock.json')];
const SKIPPED = new Set(['node_modules', 'dist', '.git']);

/** The latest modification time (ms) of any file under `folder`. */
function newestUnder(folder) {
  let newest = 0;
  let entries;
  try {
    entries = fs.readdirSync(folder, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const entry of entries) {
    if (SKIPPED.has(entry.name)) continue;
    const full = path.join(folder, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestUnder(full));
    else if (entry.isFile()) newest = Math.max(newest, fs.statSync(full).mtimeMs);
  }
  return newest;
}

function newestSource() {
  let newest = 0;
  for (const folder of SOURCES) newest = Math.max(newest, newestUnder(path.join(ROOT, folder)));
  for (const file of SETTINGS) {
    try {
      newest = Math.max(newest, fs.statSync(path.join(ROOT, file)).mtimeMs);
    } catch {
      // Not there (no lock file yet): nothing to compare.
    }
  }
  return newest;
}

/** `started_at_ms` of a record file, or null when there is none. */
function startOf(file) {
  try {
    const record = JSON.parse(fs.readFileSync(file, 'utf8'));
    return typeof record.started_at_ms === 'number' ? record.started_at_ms : null;
  } catch {
    return null;
  }
}

function write(file, startedAtMs) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify({ started_at_ms: startedAtMs })}\n`);
}

switch (process.argv[2]) {
  case '--starting':
    write(STARTING, Date.now());
    break;
  case '--built': {
    const started = startOf(STARTING);
    if (started === null) throw new Error(`${path.relative(ROOT, STARTING)} is missing: run the whole of npm run build`);
    write(RECORD, started);
    break;
  }
  default: {
    const started = startOf(RECORD);
    const fresh = started !== null && newestSource() < started;
    if (!fresh) process.stderr.write('building first: the sources changed since the last build\n');
    process.exit(fresh ? 0 : 1);
  }
}
