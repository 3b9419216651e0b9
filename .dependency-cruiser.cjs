/**
 * The import rules of the layout (docs: /work conventions "Layout", issue #31), checked by
 * `npm run lint:imports` in CI and by test/infra/ImportRules.test.ts. TypeScript 7 has no JS API,
 * so the TypeScript sources are read with swc.
 */
module.exports = {
  forbidden: [
    { name: "services-not-outward", severity: "error", comment: "services never import http, layers or sandbox",
      from: { path: "^src/services/" }, to: { path: "^src/(http|layers|sandbox)/" } },
    { name: "http-not-layers", severity: "error", comment: "http never imports layers or sandbox",
      from: { path: "^src/http/" }, to: { path: "^src/(layers|sandbox)/" } },
    { name: "layers-not-sandbox", severity: "error", comment: "layers never import sandbox",
      from: { path: "^src/layers/" }, to: { path: "^src/sandbox/" } },
    { name: "contract-only-domain", severity: "error", comment: "http/contract imports only domain (and itself)",
      from: { path: "^src/http/contract/" }, to: { path: "^src/", pathNot: "^src/(domain|http/contract)/" } },
    { name: "client-only-contract", severity: "error", comment: "the typed client imports only the contract and domain",
      from: { path: "^src/http/client\\.ts$" }, to: { path: "^src/", pathNot: "^src/(domain|http/contract)/" } },
    { name: "panel-only-contract-and-client", severity: "error", comment: "the panel imports only the contract and the typed client",
      from: { path: "^src/panel/" }, to: { path: "^src/", pathNot: "^src/(panel|http/contract)/|^src/http/client\\.ts$" } },
    { name: "domain-only-domain", severity: "error", comment: "domain imports only domain",
      from: { path: "^src/domain/" }, to: { path: "^src/", pathNot: "^src/domain/" } },
    { name: "no-cycles", severity: "error",
      comment: "no import cycles (a type-only back-reference, erased at compile time, is not one: a piece of a service typing itself by the service's shape)",
      from: { path: "^src/" }, to: { circular: true, viaOnly: { dependencyTypesNot: ["type-only"] } } },
    { name: "not-to-unresolvable", severity: "error", comment: "an import that resolves to nothing",
      from: { path: "^src/" }, to: { couldNotResolve: true } }
  ],
  options: {
    parser: "swc",
    doNotFollow: { path: "node_modules" },
    exclude: { path: "node_modules" },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: {
      extensions: [".ts", ".js", ".mjs"],
      exportsFields: ["exports"],
      conditionNames: ["import", "node", "default", "types"],
      mainFields: ["module", "main", "types"]
    }
  }
}
