/**
 * Every external-source twin under `/sandbox/<source>/...`, each registered through `sandboxRoute`
 * (call counts and fault injection, e.g. `{"route":"GET /sandbox/streaming/helix/users","kind":"hang"}`),
 * and the publish route (Publish.ts) whose events they serve. Provides `SandboxState.layer` and
 * `SourceState.layer` itself; built together with `SandboxRoutes` it shares those states (layers are
 * memoised by reference within a build).
 */
import { Layer } from "effect"
import type { HttpRouter } from "effect/http"
import { SandboxState } from "../SandboxRoute.ts"
import { ForumTwin } from "./Forum.ts"
import { MicroblogTwin } from "./Microblog.ts"
import { PhotoTwin } from "./Photo.ts"
import { PublishRoute } from "./Publish.ts"
import { PushHubRoutes } from "../PushHub.ts"
import { RssTwin } from "./Rss.ts"
import { StreamingTwin } from "./Streaming.ts"
import { TaskBoardTwin } from "./TaskBoard.ts"
import { SourceState } from "./Store.ts"
import { TaskBoardState } from "../taskboard/State.ts"
import { VideoTwin } from "./Video.ts"

export const SourcesRoutes: Layer.Layer<never, never, HttpRouter.HttpRouter> = Layer.mergeAll(
  ...StreamingTwin,
  ...VideoTwin,
  ...MicroblogTwin,
  ...PhotoTwin,
  ...ForumTwin,
  ...RssTwin,
  ...TaskBoardTwin,
  PublishRoute,
  // The push twins (WebSub hub, EventSub): src/sandbox/PushHub.ts.
  PushHubRoutes
).pipe(Layer.provide(SandboxState.layer), Layer.provide(SourceState.layer), Layer.provide(TaskBoardState.layer))
