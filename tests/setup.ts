// Loaded by mocha before every suite (see .mocharc.json).
import 'reflect-metadata';
import { bundleWidget, widgetBundleIsStale } from '../adapters/widget-client/bundle';

process.env.LOG_LEVEL = process.env.LOG_LEVEL ?? 'silent';

/**
 * Root hooks: GET /widget.js serves dist/widget/widget.js, which `npm run build` bundles. A
 * run after a bare `tsc` (or after a widget source changed) bundles it first, so the suites
 * always test the widget as its sources are now.
 */
export const mochaHooks = {
  async beforeAll(): Promise<void> {
    if (widgetBundleIsStale()) await bundleWidget();
  },
};
