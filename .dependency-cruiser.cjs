/**
 * dependency-cruiser: the module boundaries of src/ (issue #17), checked by `npm run lint`
 * (`depcruise src --config .dependency-cruiser.cjs`). Type-only imports count: a boundary is about what a module
 * knows, not only about what it loads.
 */

/** A module under `from` must not import one under `to` (both path regular expressions, or `to` a full condition). */
function boundary(name, comment, from, to) {
  return { name, comment, severity: 'error', from: { path: from }, to: typeof to === 'string' ? { path: to } : to };
}

/** Only modules matching `importers` (a path regular expression) may import those under `target`. */
function onlyImportedBy(name, comment, importers, target) {
  return { name, comment, severity: 'error', from: { path: '^src/', pathNot: importers }, to: { path: target } };
}

module.exports = {
  forbidden: [
    boundary('engine-imports-schemas-only',
      'The rule engine is pure: of src/ it knows only its own modules and the schemas (npm packages are fine).',
      '^src/engine/', { path: '^src/', pathNot: '^src/(engine|schemas)/' }),
    boundary('http-no-config-or-cluster',
      'Routes get what they need as options: they do not read the configuration or know about the cluster.',
      '^src/http/', '^src/(config|cluster)(\\.ts$|/)'),
    boundary('store-owns-its-options',
      'A store declares its own options type (and its variables, with the declaration kit of src/config/variables.ts ' +
      'and errors.ts); the configuration maps onto it, not the other way round.',
      '^src/store/', { path: '^src/config(\\.ts$|/)', pathNot: '^src/config/(variables|errors)\\.ts$' }),
    boundary('http-no-store',
      'Routes and HTTP plugins reach data only through services (src/services/), which take the caller\'s Access: ' +
      'no route reads a store or checks a project itself. Types included: a store type a route needs comes from its service.',
      '^src/http/', '^src/store/'),
    boundary('domain-no-http', 'Domain modules know nothing of HTTP.', '^src/domain/', '^src/http/'),
    onlyImportedBy('nothing-below-imports-http',
      'Only the app (src/app.ts) knows src/http/: the configuration, the composition root, stores, adapters and ' +
        'domain modules import nothing from it (what both sides need, such as auth settings or metrics, lives below).',
      '^src/(http/|app\\.ts$)', '^src/http/'),
    boundary('routes-import-no-route',
      'A route module does not import another route module: what two routes share lives in a service (src/services/) ' +
      'or a non-route module of src/http/ (tenancy.ts, ...).',
      '^src/http/', '^src/http/(approvals|attestation|execute|executions|health|revisions|scenarios|type-routes|webhook-secret)\\.ts$'),
    boundary('services-no-http',
      'Services hold the rules of the routes and know nothing of HTTP: src/http/ imports src/services/, never the reverse.',
      '^src/services/', '^src/http/'),
    onlyImportedBy('services-below-routes-only',
      'Services sit between the routes and the stores, engine and strategies: only the routes (and the app or ' +
        'the composition root, which may wire them) import them; stores, strategies, the engine and domain modules do not.',
      '^src/(http/|services/|app\\.ts$|adapters\\.ts$)', '^src/services/'),
    boundary('engine-no-type-specific-schemas',
      'The engine knows no scenario type\'s own schemas or examples (the OffChainZKP and OnChainZKP examples, ...).',
      '^src/engine/', '^src/schemas/example'),
    boundary('engine-no-type-specific-modules',
      'The engine knows no scenario type: what a type allows and adds it learns from the module\'s declarations ' +
      '(QueryPolicy, result fields) handed in by src/execution/registry.ts, never by importing a type\'s code.',
      '^src/engine/', '^src/(execution|zkp|chain|trust)/'),
    {
      name: 'engine-compiles-with-declared-evaluators', severity: 'error',
      comment: 'The engine names no scenario type: compilePlan gets each type\'s compile step (its Evaluator) from the ' +
        'module that declares it, through src/execution/registry.ts (TypeDeclarations). Within the engine only its ' +
        'index.ts (which exports it for that module) imports the ChallengeQuery evaluator.',
      from: { path: '^src/engine/', pathNot: '^src/engine/index\\.ts$' }, to: { path: '^src/engine/challenge-query\\.ts$' },
    },
    boundary('execution-no-fastify',
      'Scenario types declare their routes without HTTP machinery (ScenarioRoute); src/http/type-routes.ts registers ' +
      'them. Of the Fastify family only @fastify/error (the coded refusals) is used below src/http/.',
      '^src/execution/', '(^|/)node_modules/(fastify|fastify-plugin|@fastify/(?!error/))'),
    { name: 'no-circular', comment: 'No import cycles.', severity: 'error', from: {}, to: { circular: true } },
  ],
  options: {
    doNotFollow: { path: ['node_modules'] },
    exclude: { path: ['^dist/', '^coverage/'] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
  },
};
