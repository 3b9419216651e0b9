// Mutation testing (issue #19). Run it with `npm run mutation` (scripts/mutation.mjs), which tests
// each file of `targets` on its own, with only the test files listed for it, and prints one score a file.
// `npx stryker run` also works with this file: one run over the whole set, one report.

// The sign-in and token tests (several files share the token service's code).
const auth = ["AuthSignIn", "AuthTokens", "PlatformTokenLifecycle", "AuthHttp", "AtRest", "SandboxSignIn", "SignInEdges", "SignInQuery", "PlatformTokenHttp", "RefreshRace", "AuthFamily", "AuthTokensAnswers", "PlatformTokenAcrossInstances", "SignInRefusals"]
  .map((name) => `test/auth/${name}.test.ts`)
  // The kept check answers (AuthTokens' memo by answer object) are pinned there.
  .concat(["test/perf/HotPathAuthCheck.test.ts"])

/**
 * The mutated files and the test files that exercise each one. Adding a file is one line.
 * A key may be a glob (each match is its own run), or carry a line range: "file.ts:24-90", or
 * "file.ts:A..B", from the exported declaration of A to the end of the last exported declaration of B.
 */
export const targets = {
  "src/services/auth/Auth*.ts": auth,
  // The token policy (a refresh token presented again: raced or reused) is TokenStore.fromStorage.
  "src/services/auth/TokenStore.ts:TokenStorage..TokenStore": ["test/auth/TokenPolicy.test.ts", "test/contracts/TokenStore.test.ts", "test/auth/RefreshRace.test.ts"],
  // The token cache in front of the store: what it keeps, and that an ended token is never answered from it.
  "src/layers/auth/TokenStoreCached.ts": ["TokenStoreCached", "TokenStoreCachedEdges", "TokenStoreCachedBounds"].map((n) => `test/auth/${n}.test.ts`)
    .concat(["test/contracts/TokenStore.test.ts", "test/perf/HotPathAuthCheck.test.ts"]),
  // What a revocation notification names, and what the cache makes of one it hears.
  "src/layers/auth/TokenStoreListener.ts:revocationPayload..applyRevocations": ["test/auth/TokenStoreCached.test.ts"],
  "src/services/auth/Pkce.ts": ["test/auth/Pkce.test.ts", "test/auth/AuthSignIn.test.ts", "test/auth/AuthTokens.test.ts", "test/auth/PlatformTokenLifecycle.test.ts", "test/auth/SignInEdges.test.ts"],
  "src/domain/auth/AccessToken.ts": ["test/auth/AccessToken.test.ts", "test/auth/AuthSignIn.test.ts", "test/auth/AuthTokens.test.ts", "test/auth/PlatformTokenLifecycle.test.ts", "test/auth/SignInEdges.test.ts", "test/api/Envelope.test.ts"],
  "src/services/auth/RedirectAllowlist.ts": ["test/auth/RedirectAllowlistSpellings.test.ts", "test/auth/RedirectAllowlist.test.ts", "test/auth/AuthSignIn.test.ts", "test/auth/AuthTokens.test.ts", "test/auth/PlatformTokenLifecycle.test.ts"],
  "src/services/audit/AuditQuery.ts": ["test/audit/AuditQueryParsing.test.ts", "test/audit/AuditQuery.test.ts", "test/contracts/AuditLog.test.ts"],
  "src/services/forms/FormValidation.ts": ["test/forms/FormValidation.test.ts", "test/forms/FormValidationEdges.test.ts", "test/forms/FormsApi.test.ts", "test/forms/FormValidationProblems.test.ts"],
  "src/domain/forms/FormProblems.ts": ["test/forms/FormValidationProblems.test.ts", "test/forms/FormValidation.test.ts", "test/forms/FormsApi.test.ts"],
  // The interactions endpoint's guard (forms-runtime.md §1) and who decides a review (§4).
  "src/services/submissions/InteractionSignature.ts": ["test/submissions/InteractionSignature.test.ts"],
  "src/services/submissions/ReviewRules.ts": ["test/submissions/ReviewRules.test.ts"],
  // The review message within the platform's embed limits, a Private answer marked.
  "src/services/submissions/ReviewMessage.ts": ["test/submissions/ReviewRules.test.ts"],
  // How many forms a member may start in a minute (§2), in memory and in Redis.
  "src/services/submissions/StartLimit.ts": ["test/submissions/StartLimit.test.ts"],
  "src/layers/submissions/StartLimitLive.ts": ["test/submissions/StartLimit.test.ts"],
  // What a decided review does in its transaction (the DM, the share, the edit, the audit entry).
  "src/layers/submissions/ReviewDecision.ts": ["test/submissions/ReviewFlow.test.ts", "test/api/SubmissionsHttpReview.test.ts", "test/submissions/ShareDiscord.test.ts"],
  // The key the endpoint checks signatures with: kept, shared, re-read after a refused signature.
  "src/layers/submissions/CachedBotApplications.ts": ["test/submissions/CachedBotApplications.test.ts"],
  // Only the input schemas and their rules; the rest of Form.ts is output wire shapes.
  "src/domain/forms/Form.ts:StepType..FormInput": ["test/forms/FormValidation.test.ts", "test/forms/FormValidationEdges.test.ts", "test/forms/FormsApi.test.ts", "test/forms/FormInputBounds.test.ts", "test/forms/FormValidationProblems.test.ts"],
  // The global budget's sliding log (memory and, with TEST_REDIS_URL, its Redis script), and the limiter's use of it.
  "src/layers/platform/discord/DiscordGlobalBudget.ts": ["GlobalBudgetStore", "RateLimitBehaviourBudgets", "RateLimitRefusals"].map((n) => `test/platform/${n}.test.ts`),
  "src/layers/platform/discord/DiscordRateLimits.ts:144-163": ["RateLimitBehaviourBudgets", "RateLimitBehaviourStoreMetrics", "RateLimitRefusals"].map((n) => `test/platform/${n}.test.ts`),
  // Unordered requests together within a bucket's remaining (#32's review messages): the lock, what an answer teaches, the choice.
  "src/layers/platform/discord/DiscordRateLimits.ts:165-273": ["RateLimitUnordered", "RateLimitBehaviourBuckets", "RateLimitBehaviourBudgets", "RateLimitBehaviourStoreMetrics", "RateLimitRefusals"].map((n) => `test/platform/${n}.test.ts`),
  // The rate limiter: its layer (DiscordRateLimits.ts) and its stateless arithmetic (DiscordRateLimitRules.ts).
  // (DiscordGlobalBudget.test.ts is left out for time: RateLimitBehaviourBudgets pins the budget's arithmetic.)
  "src/layers/platform/discord/DiscordRateLimit*.ts": ["RateLimitUnordered", "RateLimitBehaviourBuckets", "RateLimitBehaviourBudgets", "RateLimitBehaviourStoreMetrics", "RateLimitRefusals", "DiscordChatPlatform", "DiscordSandbox"].map((n) => `test/platform/${n}.test.ts`),
  "src/services/infra/Cipher.ts": ["test/infra/CipherKeyring.test.ts", "test/infra/Cipher.test.ts", "test/auth/AuthSignIn.test.ts", "test/auth/AuthTokens.test.ts", "test/auth/PlatformTokenLifecycle.test.ts", "test/auth/PlatformTokenAcrossInstances.test.ts"],
  // Delivery (#14): what is posted (filters, renderer), whether it was already (dedup: Select's
  // "already posted" and the item id), and the posting itself.
  "src/services/delivery/render/Filters.ts": ["test/delivery/Filters.test.ts", "test/delivery/Select.test.ts", "test/delivery/FiltersEdges.test.ts"],
  "src/services/delivery/render/Render.ts": ["test/delivery/Render.test.ts", "test/delivery/Timestamp.test.ts", "test/delivery/Select.test.ts", "test/delivery/RenderEdges.test.ts", "test/delivery/RenderPosting.test.ts"],
  // delivery.md §10: the mentions rule, the embed, splitting and forum posts.
  "src/services/delivery/render/{Mentions,Split,Embed,ForumPost}.ts": ["test/delivery/RenderPosting.test.ts"],
  "src/services/delivery/render/Select.ts": ["test/delivery/Select.test.ts", "test/delivery/SelectAgeCutoff.test.ts"],
  "src/services/delivery/render/Item.ts": ["test/delivery/Text.test.ts", "test/delivery/Item.test.ts", "test/delivery/Select.test.ts", "test/delivery/Render.test.ts", "test/delivery/Filters.test.ts"],
  "src/services/delivery/DeliveryPost.ts": ["test/delivery/DeliveryPost.test.ts", "test/delivery/DeliveryReconcile.test.ts", "test/delivery/DeliverySteps.test.ts", "test/delivery/DeliveryWorkers.test.ts", "test/delivery/WebhookRefusals.test.ts", "test/delivery/DeliveryCrosspost.test.ts", "test/delivery/ForumPostSend.test.ts"],
  // An unanswered send looked for in its channel (#30 item 5), its thread or its forum (#34).
  "src/services/delivery/DeliveryReconcile.ts": ["test/delivery/DeliveryReconcile.test.ts", "test/delivery/DeliveryReconcileThreads.test.ts", "test/delivery/UncertainSend.test.ts", "test/delivery/UncertainSendThreads.test.ts", "test/delivery/DeliverySteps.test.ts", "test/delivery/DeliveryCrosspost.test.ts"],
  // The crosspost budget of a channel (10 an hour, rolling) and what a publication's failure means (#34).
  "src/services/delivery/CrosspostBudget.ts": ["test/delivery/CrosspostBudget.test.ts", "test/delivery/DeliveryCrosspost.test.ts"],
  // The gateway's own limits through an outage of the shared counters (#30): this instance's counters and
  // their carry, countRequest's paths through them, and the Redis carry script (needs TEST_REDIS_URL).
  "src/http/edge/RateLimitFallback.ts": ["test/api/RateLimitFallback.test.ts", "test/api/RateLimitOutageCounts.test.ts"],
  "src/http/edge/RateLimit.ts": ["test/api/RateLimitOutageCounts.test.ts", "test/api/RateLimit.test.ts"],
  "src/layers/infra/RateLimitCarryRedis.ts": ["test/api/RateLimitCarryRedis.test.ts"],
  // The shared counters' client: attempts at start-up, reconnecting for ever once connected.
  "src/layers/infra/RedisClient.ts": ["test/infra/RedisClientStart.test.ts"],
  // Idempotency keys (#30): which routes commit their key with their write, what is kept and replayed;
  // the store's claim, lock and answer (a cut request frees its key; a retry never runs a write twice).
  "src/http/edge/IdempotencyLive.ts": ["test/api/IdempotencyKeep.test.ts", "test/api/IdempotencyAtomic.test.ts", "test/api/IdempotencyHttp.test.ts", "test/api/IdempotencyKept.test.ts", "test/api/IdempotencyFeeds.test.ts"],
  // (The claim and what follows it: the lines a cut request once left claimed; the whole file takes an hour.)
  "src/layers/infra/IdempotencyStoreSql.ts:125-159": ["test/contracts/IdempotencyStore.test.ts", "test/infra/IdempotencyStoreSql.test.ts", "test/api/IdempotencyReset.test.ts"],
  // When sources are polled: a first poll once, a refresh always, the keyed "now" poll and its re-read.
  // What an accepted submission shares (#33): a Private answer in no summary and on no card rides on it.
  "src/services/submissions/Share.ts": ["test/submissions/Share.test.ts", "test/submissions/SharePrivacy.test.ts"],
  // The sweep that queues a review message whose job never came (a submission is never left unposted).
  "src/layers/submissions/SubmissionJobs.ts:153-168": ["test/submissions/SubmitStatement.test.ts"],
  // A job's last attempt keeps a failure that might have healed on its effect (never pending for ever):
  // which attempt is the last, the reason's words, and the three jobs' catches that use it.
  "src/layers/submissions/SubmissionJobs.ts:48-50": ["test/submissions/SubmissionJobsLastAttempt.test.ts"],
  "src/layers/submissions/SubmissionJobs.ts:82-83": ["test/submissions/SubmissionJobsLastAttempt.test.ts"],
  "src/layers/submissions/SubmissionJobs.ts:113-114": ["test/submissions/SubmissionJobsLastAttempt.test.ts"],
  "src/layers/submissions/SubmissionJobs.ts:141-141": ["test/submissions/SubmissionJobsLastAttempt.test.ts"],
  "src/services/delivery/DeliveryScheduling.ts": ["test/delivery/Scheduling.test.ts", "test/delivery/StartAfterOutage.test.ts", "test/delivery/PollNow.test.ts", "test/delivery/PollNowRace.test.ts", "test/delivery/PollSlot.test.ts", "test/delivery/DeliverySteps.test.ts", "test/delivery/DeliveryWorkers.test.ts"]
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
