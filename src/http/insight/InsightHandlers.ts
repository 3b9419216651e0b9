/**
 * The insight routes of every feed module (delivery.md §8), merged into each module's group by
 * handlers/Feeds.ts: access to the module (Directory: 404 unknown bot or server, 403 module not
 * available), then the FeedInsight service.
 */
import { Effect } from "effect"
import type { DeliveryLogQuery } from "../../domain/insight/FeedInsight.ts"
import type { FeedModuleName } from "../../domain/platform/Platform.ts"
import { Directory } from "../../services/platform/Directory.ts"
import type { ServerAccess } from "../../services/platform/Directory.ts"
import { FeedInsight } from "../../services/insight/FeedInsight.ts"
import { CurrentPrincipal } from "../contract/Middleware.ts"

interface FeedParams {
  readonly appClientId: string
  readonly serverId: string
  readonly feedId: string
}

export const insightHandlersFor = (m: FeedModuleName) =>
  Effect.gen(function*() {
    const directory = yield* Directory
    const insight = yield* FeedInsight

    const withAccess = <A, E, R>(params: FeedParams, f: (access: ServerAccess) => Effect.Effect<A, E, R>) =>
      Effect.gen(function*() {
        const principal = yield* CurrentPrincipal
        return yield* f(yield* directory.access(principal, params.appClientId, params.serverId, m))
      })

    return {
      preview: ({ params }: { readonly params: FeedParams }) => withAccess(params, (a) => insight.preview(a, m, params.feedId)),
      test: ({ params }: { readonly params: FeedParams }) => withAccess(params, (a) => insight.test(a, m, params.feedId)),
      refresh: ({ params }: { readonly params: FeedParams }) =>
        withAccess(params, (a) => insight.refresh(a, m, params.feedId)).pipe(Effect.as({ success: true })),
      deliveries: ({ params, query }: { readonly params: FeedParams; readonly query: DeliveryLogQuery }) =>
        withAccess(params, (a) => insight.deliveries(a, m, params.feedId, query))
    }
  })
