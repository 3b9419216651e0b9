/**
 * Which routes' keys are atomic (committed with the write, in its transaction), read from the real
 * Api: forms create, update and delete, and each feed module's delete; every other mutating route
 * claims its key first. (An endpoint's `name` is its function's, "HttpApiEndpoint": reading it once
 * made every key a claimed one, and a create cut as its claim committed held the key for minutes.)
 */
import { assert, describe, it } from "@effect/vitest"
import type { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { Api } from "../../src/http/contract/Api.ts"
import { isAtomic } from "../../src/http/edge/IdempotencyLive.ts"

describe("atomic idempotency keys", () => {
  it("forms create/update/delete and the feed modules' delete, and no other route", () => {
    const atomic: Array<string> = []
    const claimed: Array<string> = []
    // As the middleware gets them: the groups and endpoints of any Api.
    for (const group of Object.values(Api.groups) as ReadonlyArray<unknown> as ReadonlyArray<HttpApiGroup.Top>) {
      for (const endpoint of Object.values(group.endpoints) as ReadonlyArray<HttpApiEndpoint.Top>) {
        if (!["POST", "PATCH", "DELETE"].includes(endpoint.method)) continue
        ;(isAtomic(group, endpoint) ? atomic : claimed).push(`${group.identifier}.${endpoint.identifier}`)
      }
    }
    assert.deepStrictEqual(atomic.sort(), [
      "forms.create",
      "forms.delete",
      "forms.update",
      "forum.delete",
      "microblog.delete",
      "photo.delete",
      "rss.delete",
      "streaming.delete",
      "video.delete"
    ])
    // The routes that call the platform or queue a job are claimed: among them each feed create.
    for (const m of ["forum", "microblog", "photo", "rss", "streaming", "video"]) assert.include(claimed, `${m}.create`)
    assert.include(claimed, "submissions.unpublish")
  })
})
