// Mutation testing (issue #19). Run it with `npm run mutation` (scripts/mutation.mjs), which tests
// each file of `targets` on its own, with only the test files listed for it, and prints one score a file.
// `npx stryker run` also works with this file: one run over the whole set, one report.

// The sign-in and token tests (several files share the token service's code).
const auth = ["AuthSignIn", "AuthTokens", "AuthPlatformToken", "AuthHttp", "AtRest", "SandboxSignIn", "SignInEdges", "SignInQuery", "PlatformToken", "PlatformTokenHttp", "RefreshRace", "AuthFamilyMutation", "AuthTokensMutation", "PlatformTokenMutation", "SignInMutation"]
  .map((name) => `test/auth/${name}.test.ts`)
  // The kept check answers (AuthTokens' memo by answer object) are pinned there.
  .concat(["test/perf/HotPathAuthCheck.test.ts"])

/**
 * The mutated files and the test files that exercise each one. Adding a file is one line.
 * A key may be a glob (each match is its own run), or carry a line range: "file.ts:24-90", or
 * "file.ts:A..B", from the exported declaration of A to the end of the last exported declaration of B.
 */
export const targets = {
  "src/services/Auth*.ts": auth,
  // The token policy (a refresh token presented again: raced or reused) is TokenStore.fromStorage.
  "src/services/TokenStore.ts:TokenStorage..TokenStore": ["test/auth/TokenPolicyMutation.test.ts", "test/contracts/TokenStore.test.ts", "test/auth/RefreshRace.test.ts"],
  // The token cache in front of the store: what it keeps, and that an ended token is never answered from it.
  "src/layers/cache/TokenStoreCached.ts": ["TokenStoreCached", "TokenStoreCachedMutation", "TokenStoreCachedBounds"].map((n) => `test/auth/${n}.test.ts`)
    .concat(["test/contracts/TokenStore.test.ts", "test/perf/HotPathAuthCheck.test.ts"]),
  // What a revocation notification names, and what the cache makes of one it hears.
  "src/layers/sql/TokenStoreListener.ts:revocationPayload..applyRevocations": ["test/auth/TokenStoreCached.test.ts"],
  "src/services/Pkce.ts": ["test/auth/PkceMutation.test.ts", "test/auth/AuthSignIn.test.ts", "test/auth/AuthTokens.test.ts", "test/auth/AuthPlatformToken.test.ts", "test/auth/SignInEdges.test.ts"],
  "src/domain/AccessToken.ts": ["test/auth/AccessTokenMutation.test.ts", "test/auth/AuthSignIn.test.ts", "test/auth/AuthTokens.test.ts", "test/auth/AuthPlatformToken.test.ts", "test/auth/SignInEdges.test.ts", "test/api/Envelope.test.ts"],
  "src/services/RedirectAllowlist.ts": ["test/auth/RedirectAllowlistMutation.test.ts", "test/auth/RedirectAllowlist.test.ts", "test/auth/AuthSignIn.test.ts", "test/auth/AuthTokens.test.ts", "test/auth/AuthPlatformToken.test.ts"],
  "src/services/AuditQuery.ts": ["test/audit/AuditQueryMutation.test.ts", "test/audit/AuditQuery.test.ts", "test/contracts/AuditLog.test.ts"],
  "src/services/FormValidation.ts": ["test/forms/FormValidation.test.ts", "test/forms/FormValidationEdges.test.ts", "test/forms/FormsApi.test.ts", "test/forms/FormValidationMutation.test.ts"],
  // Only the input schemas and their rules; the rest of Form.ts is output wire shapes.
  "src/domain/Form.ts:StepType..FormInput": ["test/forms/FormValidation.test.ts", "test/forms/FormValidationEdges.test.ts", "test/forms/FormsApi.test.ts", "test/forms/FormInputMutation.test.ts", "test/forms/FormValidationMutation.test.ts"],
  // (DiscordGlobalBudget.test.ts is left out for time: RateLimitBehaviourBudgets pins the budget's arithmetic.)
  // The rate limiter: its layer (DiscordRateLimits.ts) and its stateless arithmetic (DiscordRateLimitRules.ts).
  "src/layers/discord/DiscordRateLimit*.ts": ["RateLimitBehaviourBuckets", "RateLimitBehaviourBudgets", "RateLimitBehaviourStoreMetrics", "RateLimitMutation2", "DiscordChatPlatform", "DiscordSandbox"].map((n) => `test/discord/${n}.test.ts`),
  "src/services/Cipher.ts": ["test/crypto/CipherMutation.test.ts", "test/crypto/Cipher.test.ts", "test/auth/AuthSignIn.test.ts", "test/auth/AuthTokens.test.ts", "test/auth/AuthPlatformToken.test.ts", "test/auth/PlatformToken.test.ts"],
  // Delivery (#14): what is posted (filters, renderer), whether it was already (dedup: Select's
  // "already posted" and the item id), and the posting itself.
  "src/services/delivery/Filters.ts": ["test/delivery/Filters.test.ts", "test/delivery/Select.test.ts", "test/delivery/FiltersMutation.test.ts"],
  "src/services/delivery/Render.ts": ["test/delivery/Render.test.ts", "test/delivery/Timestamp.test.ts", "test/delivery/Select.test.ts", "test/delivery/RenderMutation.test.ts", "test/delivery/RenderPosting.test.ts"],
  // delivery.md §10: the mentions rule, the embed, splitting and forum posts.
  "src/services/delivery/{Mentions,Split,Embed,ForumPost}.ts": ["test/delivery/RenderPosting.test.ts"],
  "src/services/delivery/Select.ts": ["test/delivery/Select.test.ts", "test/delivery/SelectMutation.test.ts"],
  "src/services/delivery/Item.ts": ["test/delivery/Text.test.ts", "test/delivery/ItemMutation.test.ts", "test/delivery/Select.test.ts", "test/delivery/Render.test.ts", "test/delivery/Filters.test.ts"],
  "src/services/DeliveryPost.ts": ["test/delivery/DeliveryPostMutation.test.ts", "test/delivery/DeliverySteps.test.ts", "test/delivery/DeliveryWorkers.test.ts", "test/delivery/WebhookRefusals.test.ts"],
  // When sources are polled: a first poll once, a refresh always, the keyed "now" poll and its re-read.
  "src/services/DeliveryScheduling.ts": ["test/delivery/SchedulingMutation.test.ts", "test/delivery/StartAfterOutage.test.ts", "test/delivery/PollNow.test.ts", "test/delivery/PollNowRace.test.ts", "test/delivery/PollSlot.test.ts", "test/delivery/DeliverySteps.test.ts", "test/delivery/DeliveryWorkers.test.ts"]
}

/** @type {import("@stryker-mutator/api/core").PartialStrykerOptions} */
export default {
  testRunner: "vitest",
  plugins: ["@stryker-mutator/vitest-runner"],
  // Runs only the test files of the mutated file; see there why not Stryker's `testFiles` option.
  vitest: { configFile: "scripts/stryker/vitest.config.ts", related: false },
  coverageAnalysis: "perTest",
  // TypeScript 7 has no JS API: no typescript-checker, and a tsconfig name that does not exist keeps
  // Stryker's sandbox step from loading `typescript` to rewrite tsconfig paths (ours needs no rewrite).
  checkers: [],
  tsconfigFile: "stryker-no-tsconfig.json",
  // The shared machine has 2 cores; scripts/mutation.mjs may lower this with --concurrency.
  concurrency: 2,
  // A mutant run over its time-out counts as detected. The default 5 s on top of the dry run's time is
  // far too little on a busy shared machine (a worker start loads Effect; some suites start PGlite):
  // at 20 s half of one file's mutants "timed out" that kill normally. Real infinite loops are rare.
  timeoutMS: 60_000,
  timeoutFactor: 2,
  tempDirName: ".stryker-tmp",
  cleanTempDir: "always",
  ignorePatterns: ["dist", "bench", "reports", ".data", "coverage", ".build-test", "*.cpuprofile", ".stryker-tmp*"],
  // (`npx stryker run` mutates named ranges as whole files; scripts/mutation.mjs resolves them.)
  mutate: Object.keys(targets).map((key) => key.replace(/:\w+\.\.\w+$/, "")),
  reporters: ["html", "json", "clear-text"],
  htmlReporter: { fileName: "reports/mutation/all.html" },
  jsonReporter: { fileName: "reports/mutation/all.json" },
  logLevel: "warn",
  // Static mutants (code run while a module loads: schemas, constants) are part of the score on purpose.
  warnings: { slow: false },
  fileLogLevel: "off"
}
