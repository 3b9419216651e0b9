/**
 * Storage of feeds (table `feeds`; the SQL layer is src/layers/feeds/FeedsRepoSql.ts). The webhook
 * token is stored only as the Cipher's ciphertext: nothing here ever sees it in clear. Writes that
 * belong together (a feed and its audit entry) run inside `transaction`, which the audit log joins.
 *
 * A record carries its module's typed options (`WebhookOptionsInput<M>`: decoded once, where they are
 * read back from storage), with its scope and webhook: everything a reader needs, the delivery
 * worker included (a lookup by source `(module, feed_identifier)` returns the same `FeedRecord<M>`).
 */
import type { Effect, Option } from "effect"
import { Context } from "effect"
import type { BadRequest, ServiceUnavailable } from "../../domain/infra/Errors.ts"
import type { DisplayInfo, WebhookOptionsInput } from "../../domain/feeds/Feed.ts"
import type { FeedModuleName } from "../../domain/platform/Platform.ts"
import type { ForumTag } from "../delivery/render/ForumPost.ts"

/** Whose feeds: one module of one server as seen by one bot. */
export interface FeedScope<M extends FeedModuleName = FeedModuleName> {
  readonly botId: string
  readonly serverId: string
  readonly module: M
}

export interface StoredWebhook {
  readonly id: string
  /** Cipher output for the token, aad `feed-webhook:${id}`. */
  readonly tokenEnc: string
  readonly name: string
  readonly avatar: string | null
  readonly channelId: string
  /**
   * The tags of the forum channel the webhook posts in (delivery.md §10: one post per item), as the
   * platform listed them when last read (FeedsForum.ts); null or absent: the channel is not a forum.
   */
  readonly forumTags?: ReadonlyArray<ForumTag> | null
}

/** A feed to store, of module `M`; without `M`, of any module. */
export interface NewFeed<M extends FeedModuleName = FeedModuleName> extends FeedScope<M> {
  readonly feedIdentifier: string
  /** The module's options; one that is absent takes its default (`withDefaults`). */
  readonly webhookOptions: WebhookOptionsInput<M>
  readonly displayInfo: DisplayInfo | null
  readonly webhook: StoredWebhook
}

export interface FeedRecord<M extends FeedModuleName = FeedModuleName> extends NewFeed<M> {
  /** Decimal string of the numeric id. */
  readonly id: string
}

/** Narrows a record read for `module` (the statements select by module; this tells TypeScript). */
export const isOfModule = <M extends FeedModuleName>(module: M) => (r: FeedRecord): r is FeedRecord<M> => r.module === module

/** The outcome of an insert: the limit and the duplicate rule are checked atomically with it. */
export type InsertResult<M extends FeedModuleName = FeedModuleName> =
  | { readonly _tag: "Inserted"; readonly feed: FeedRecord<M> }
  | { readonly _tag: "Duplicate" }
  | { readonly _tag: "LimitReached"; readonly limit: number }

/** A write fails with 400 when the database refuses a value the client sent (U+0000, see SqlFailure). */
type WriteError = ServiceUnavailable | BadRequest

export class FeedsRepo extends Context.Service<FeedsRepo, {
  readonly list: <M extends FeedModuleName>(scope: FeedScope<M>) => Effect.Effect<ReadonlyArray<FeedRecord<M>>, ServiceUnavailable>
  readonly count: (scope: FeedScope) => Effect.Effect<number, ServiceUnavailable>
  readonly find: <M extends FeedModuleName>(scope: FeedScope<M>, id: string) => Effect.Effect<Option.Option<FeedRecord<M>>, ServiceUnavailable>
  /** Inserts unless the scope already holds `limit` feeds or the same identifier on the same webhook. */
  readonly insert: <M extends FeedModuleName>(feed: NewFeed<M>, limit: number) => Effect.Effect<InsertResult<M>, WriteError>
  /** `forumTags`: the webhook's forum as read now (undefined: kept as stored). */
  readonly updateOptions: <M extends FeedModuleName>(
    scope: FeedScope<M>,
    id: string,
    options: WebhookOptionsInput<M>,
    displayInfo: DisplayInfo | null,
    forumTags?: ReadonlyArray<ForumTag> | null
  ) => Effect.Effect<Option.Option<FeedRecord<M>>, WriteError>
  /** The webhook's forum tags as read now (the test message reads them again); false when there is no such feed. */
  readonly setForumTags: (scope: FeedScope, id: string, forumTags: ReadonlyArray<ForumTag> | null) => Effect.Effect<boolean, ServiceUnavailable>
  readonly remove: (scope: FeedScope, id: string) => Effect.Effect<boolean, ServiceUnavailable>
  /** Runs `self` as one unit: all of it, or (on failure) none of it. */
  readonly transaction: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E | ServiceUnavailable, R>
}>()("gateway/FeedsRepo") {}
