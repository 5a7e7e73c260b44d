// Layering rules of ARCHITECTURE.md, checked in CI (`npm run lint:layers`).
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'domain-is-pure',
      comment: 'domain imports nothing of ours outside domain, and no I/O: clock and randomness come in as arguments',
      severity: 'error',
      from: { path: '^domain/' },
      to: { pathNot: ['^domain/', '^node_modules/(io-ts|fp-ts)/'] },
    },
    {
      name: 'application-stays-inward',
      comment: 'application imports domain, its ports and the read models it queries; never adapters or infrastructure',
      severity: 'error',
      from: { path: '^application/' },
      to: { path: ['^adapters/', '^infrastructure/'] },
    },
    {
      name: 'projections-stay-inward',
      comment: 'projections import domain and the application ports and shared helpers, never use cases or the edges',
      severity: 'error',
      from: { path: '^projections/' },
      to: { path: ['^adapters/', '^infrastructure/', '^application/(?!ports/|shared/)'] },
    },
    {
      name: 'adapters-call-use-cases',
      comment: 'routers, resolvers, middleware and the CLI call application use cases: they neither read projections nor run the command handler themselves',
      severity: 'error',
      from: { path: '^adapters/' },
      to: { path: ['^projections/', '^application/command-handling/'] },
    },
    {
      name: 'adapters-reach-infrastructure-only-through-the-composition-root',
      severity: 'error',
      from: { path: '^adapters/' },
      to: { path: '^infrastructure/', pathNot: '^infrastructure/composition-root\\.ts$' },
    },
    {
      name: 'infrastructure-wires-adapters-only-in-the-composition-root',
      severity: 'error',
      from: { path: '^infrastructure/', pathNot: ['^infrastructure/composition-root\\.ts$', '^infrastructure/main\\.ts$'] },
      to: { path: '^adapters/' },
    },
    {
      name: 'connector-sdk-stands-alone',
      comment: 'organizations run the SDK without the platform: it imports nothing else of ours',
      severity: 'error',
      from: { path: '^adapters/connector-sdk/' },
      to: { path: ['^domain/', '^application/', '^projections/', '^infrastructure/', '^adapters/(?!connector-sdk/)'] },
    },
    {
      name: 'widget-client-stands-alone',
      comment: "widget.js runs in the visitor's browser: its sources import only each other (esbuild bundles them alone)",
      severity: 'error',
      from: { path: '^adapters/widget-client/src/' },
      to: { pathNot: '^adapters/widget-client/src/' },
    },
    {
      name: 'production-code-does-not-import-tests',
      severity: 'error',
      from: { path: '^(domain|application|projections|adapters|infrastructure)/' },
      to: { path: '^(tests|bench)/' },
    },
    {
      name: 'no-circular',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    exclude: { path: '^(dist|node_modules)/' },
  },
};
