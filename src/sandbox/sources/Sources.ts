/**
 * Every external-source twin under `/sandbox/<source>/...`, each registered through `sandboxRoute`
 * (call counts and fault injection, e.g. `{"route":"GET /sandbox/streaming/helix/users","kind":"hang"}`).
 * Provides `SandboxState.layer` itself; built together with `SandboxRoutes` it shares that one state
 * (layers are memoised by reference within a build).
 */
import { Layer } from "effect"
import type { HttpRouter } from "effect/http"
import { SandboxState } from "../SandboxRoute.ts"
import { ForumTwin } from "./Forum.ts"
import { MicroblogTwin } from "./Microblog.ts"
import { PhotoTwin } from "./Photo.ts"
import { RssTwin } from "./Rss.ts"
import { StreamingTwin } from "./Streaming.ts"
import { TaskBoardTwin } from "./TaskBoard.ts"
import { VideoTwin } from "./Video.ts"

export const SourcesRoutes: Layer.Layer<never, never, HttpRouter.HttpRouter> = Layer.mergeAll(
  ...StreamingTwin,
  ...VideoTwin,
  ...MicroblogTwin,
  ...PhotoTwin,
  ...ForumTwin,
  ...RssTwin,
  ...TaskBoardTwin
).pipe(Layer.provide(SandboxState.layer))
