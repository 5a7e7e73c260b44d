// The platform's extraction worker (infrastructure/extraction/extraction-worker.ts) on a thread
// where pdf.js cannot load, as on a broken install: unpdf's loader and its reader reject.

import Module from 'node:module';

type Load = (request: string, parent: unknown, isMain: boolean) => unknown;
const moduleWithLoad = Module as unknown as { _load: Load };
const load = moduleWithLoad._load;
const cannotLoad = (): Promise<never> => Promise.reject(Object.assign(new Error('pdf.js could not be loaded'), { name: 'ModuleLoadError' }));
moduleWithLoad._load = function (request, parent, isMain) {
  const loaded = load.call(this, request, parent, isMain);
  return request === 'unpdf' ? { ...(loaded as object), getResolvedPDFJS: cannotLoad, getDocumentProxy: cannotLoad } : loaded;
};

// Loaded after the hook, so that it gets the unpdf above.
require('../../infrastructure/extraction/extraction-worker');
