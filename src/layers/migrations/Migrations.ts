/** Migrations run at start (and in tests); each is a module numbered `NNNN_name`. */
import { Effect, Layer } from "effect"
import { Migrator } from "effect/sql"
import initial from "./0001_initial.ts"
import audit from "./0004_audit.ts"
import delivery from "./0005_delivery.ts"
import platformRefreshClaim from "./0006_platform_refresh_claim.ts"
import feedInsight from "./0007_feed_insight.ts"
import push from "./0008_push.ts"
import pollSlots from "./0009_poll_slots.ts"
import oneStatement from "./0010_one_statement.ts"
import formsRead from "./0011_forms_read.ts"
import auditPages from "./0012_audit_pages.ts"
import plannedOnce from "./0013_planned_once.ts"
import durableCreate from "./0014_durable_create.ts"
import idempotency from "./0015_idempotency.ts"
import submissions from "./0017_submissions.ts"
import publications from "./0018_publications.ts"
import share from "./0019_share.ts"
import forumTags from "./0020_forum_tags.ts"
import crossposts from "./0021_crossposts.ts"
import pendingReviews from "./0022_pending_reviews.ts"

export const migrations = {
  "0001_initial": initial,
  "0004_audit": audit,
  "0005_delivery": delivery,
  "0006_platform_refresh_claim": platformRefreshClaim,
  "0007_feed_insight": feedInsight,
  "0008_push": push,
  "0009_poll_slots": pollSlots,
  "0010_one_statement": oneStatement,
  "0011_forms_read": formsRead,
  "0012_audit_pages": auditPages,
  "0013_planned_once": plannedOnce,
  "0014_durable_create": durableCreate,
  "0015_idempotency": idempotency,
  "0017_submissions": submissions,
  "0018_publications": publications,
  "0019_share": share,
  "0020_forum_tags": forumTags,
  "0021_crossposts": crossposts,
  "0022_pending_reviews": pendingReviews
}

const run = Migrator.make({})

export const runMigrations = run({ loader: Migrator.fromRecord(migrations), table: "gateway_migrations" })

/** Applies pending migrations when built; re-applying is a no-op. */
export const MigrationsLayer = Layer.effectDiscard(
  runMigrations.pipe(
    Effect.tap((applied) =>
      applied.length === 0 ? Effect.void : Effect.logInfo("database migrated", { applied: applied.map(([, n]) => n) })
    )
  )
)
