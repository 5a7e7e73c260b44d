// Builds widget.js: src/main.ts and what it imports, bundled by esbuild into one minified
// script (an IIFE: it must not leak names into the host page), at dist/widget/widget.js, which
// GET /widget.js serves. Its gzipped size is printed and held under 30 KB (the budget):
// a visitor downloads it on every site that embeds the widget. `npm run build` runs this file;
// the test suite bundles again when a source is newer than the bundle.
//
// esbuild is a dev dependency: it runs at build time only, and the server never loads it.

import fs from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';

/** The repository's root: this file runs from dist/adapters/widget-client/. */
const ROOT = path.resolve(__dirname, '..', '..', '..');
const SOURCES = path.join(ROOT, 'adapters', 'widget-client', 'src');

/** Where the bundle is written and served from. */
export const WIDGET_BUNDLE_PATH = path.join(ROOT, 'dist', 'widget', 'widget.js');

/** The most widget.js may weigh gzipped. */
export const WIDGET_GZIP_BUDGET_BYTES = 30 * 1024;

export interface WidgetBundle {
  path: string;
  bytes: number;
  gzipBytes: number;
}

/** Bundles and minifies the widget; fails (esbuild's message) on a source that does not compile. */
export async function bundleWidget(outfile = WIDGET_BUNDLE_PATH): Promise<WidgetBundle> {
  const esbuild = await import('esbuild');
  await esbuild.build({
    entryPoints: [path.join(SOURCES, 'main.ts')],
    tsconfig: path.join(ROOT, 'adapters', 'widget-client', 'tsconfig.json'),
    outfile,
    bundle: true,
    minify: true,
    format: 'iife',
    // Browsers with shadow DOM, custom properties and fetch streams: everything of the last years.
    target: ['es2020', 'chrome90', 'firefox90', 'safari15'],
    legalComments: 'none',
    logLevel: 'silent',
  });
  const code = fs.readFileSync(outfile);
  return { path: outfile, bytes: code.length, gzipBytes: gzipSync(code, { level: 9 }).length };
}

/** Whether a source file changed after the bundle was written (or there is no bundle). */
export function widgetBundleIsStale(outfile = WIDGET_BUNDLE_PATH): boolean {
  if (!fs.existsSync(outfile)) return true;
  const built = fs.statSync(outfile).mtimeMs;
  const newest = (folder: string): number =>
    Math.max(0, ...fs.readdirSync(folder, { withFileTypes: true }).map((entry) => (entry.isDirectory() ? newest(path.join(folder, entry.name)) : fs.statSync(path.join(folder, entry.name)).mtimeMs)));
  return newest(SOURCES) > built;
}

const kilobytes = (bytes: number): string => `${(bytes / 1024).toFixed(1)} KB`;

/** `node dist/adapters/widget-client/bundle.js`: builds, prints the sizes, exits 1 over the budget. */
async function main(): Promise<void> {
  const bundle = await bundleWidget();
  const within = bundle.gzipBytes <= WIDGET_GZIP_BUDGET_BYTES;
  console.log(`widget.js: ${kilobytes(bundle.bytes)} minified, ${kilobytes(bundle.gzipBytes)} gzipped (budget ${kilobytes(WIDGET_GZIP_BUDGET_BYTES)}) -> ${path.relative(ROOT, bundle.path)}`);
  if (!within) {
    console.error(`widget.js is over its budget by ${kilobytes(bundle.gzipBytes - WIDGET_GZIP_BUDGET_BYTES)} gzipped: make it smaller`);
    process.exitCode = 1;
  }
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  });
}
