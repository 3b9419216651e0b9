/**
 * What a key keeps of a request's end, and how a kept answer is sent again (http/edge/IdempotencyLive.ts
 * `keep`, `replay`; docs/choices.md): 2xx and 4xx are kept, except 408, 409 and 429; 1xx, 3xx and
 * 5xx, a stream, a defect and an interruption keep nothing; an error of the envelope is kept as the
 * envelope the framework sends. The routes give only some of these (IdempotencyHttp, IdempotencyKept,
 * IdempotencyFeeds): the rest are pinned here, on the functions themselves.
 */
import { assert, describe, it } from "@effect/vitest"
import { Cause, Exit, Stream } from "effect"
import { HttpServerResponse } from "effect/http"
import { BadRequest, Conflict, NotFound, RequestTimeout, ServiceUnavailable, TooManyRequests } from "../../src/domain/infra/Errors.ts"
import { keep, replay } from "../../src/http/edge/IdempotencyLive.ts"

const ok = (response: HttpServerResponse.HttpServerResponse) => keep(Exit.succeed(response))

describe("what a key keeps", () => {
  it("a success answer of a kept status: its status, content type and text", () => {
    assert.deepStrictEqual(ok(HttpServerResponse.text("made", { status: 201, contentType: "text/plain" })), {
      status: 201,
      headers: { "content-type": "text/plain" },
      body: "made"
    })
    assert.deepStrictEqual(ok(HttpServerResponse.text("{}", { status: 200, contentType: "application/json" }))?.status, 200)
    assert.deepStrictEqual(ok(HttpServerResponse.text("x", { status: 299 }))?.status, 299)
    assert.deepStrictEqual(ok(HttpServerResponse.text("x", { status: 499 }))?.status, 499)
    // Bytes without a text: decoded.
    assert.deepStrictEqual(ok(HttpServerResponse.uint8Array(new TextEncoder().encode("bytes"), { status: 200, contentType: "application/octet-stream" })), {
      status: 200,
      headers: { "content-type": "application/octet-stream" },
      body: "bytes"
    })
    // No content: kept as such.
    assert.deepStrictEqual(ok(HttpServerResponse.empty({ status: 204 })), { status: 204, headers: {}, body: "" })
  })

  it("1xx, 3xx, 5xx, 408, 409, 429 and a stream keep nothing", () => {
    for (const status of [101, 199, 300, 302, 399, 408, 409, 429, 500, 503]) {
      assert.isUndefined(ok(HttpServerResponse.text("x", { status })), String(status))
    }
    assert.isUndefined(ok(HttpServerResponse.stream(Stream.make(new Uint8Array([1])), { status: 200 })))
  })

  it("an error of the envelope is kept as the envelope, with its additional properties when it has them", () => {
    assert.deepStrictEqual(keep(Exit.fail(NotFound.of("There is no form 7."))), {
      status: 404,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ errors: [{ code: "Not Found", message: "There is no form 7." }] })
    })
    assert.deepStrictEqual(keep(Exit.fail(BadRequest.of("Too long.", { path: "title" }))), {
      status: 400,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ errors: [{ code: "Bad Request", message: "Too long.", additionalProperties: { path: "title" } }] })
    })
  })

  it("408, 409, 429, 503, anything not of the envelope, a defect and an interruption keep nothing", () => {
    for (const error of [RequestTimeout.of("late"), Conflict.of("busy"), TooManyRequests.of("slow down", 1), ServiceUnavailable.of("down", 5)]) {
      assert.isUndefined(keep(Exit.fail(error)), error._tag)
    }
    for (const error of ["text", null, 7, { problems: [] }, { _tag: "NotFound" }, { _tag: "Unknown", problems: [] }]) {
      assert.isUndefined(keep(Exit.fail(error)), JSON.stringify(error))
    }
    assert.isUndefined(keep(Exit.die(new Error("bug"))))
    // An error of the envelope together with a defect: the defect decides.
    assert.isUndefined(keep(Exit.failCause(Cause.combine(Cause.fail(NotFound.of("gone")), Cause.die(new Error("bug"))))))
    assert.isUndefined(keep(Exit.interrupt()))
  })
})

describe("a kept answer sent again", () => {
  it("with its status, content type and text, marked replayed", () => {
    const text = replay({ status: 201, headers: { "content-type": "text/plain" }, body: "made" })
    assert.strictEqual(text.status, 201)
    assert.strictEqual(text.headers["idempotent-replayed"], "true")
    assert.strictEqual(text.body._tag, "Uint8Array")
    assert.include(text.body._tag === "Uint8Array" ? text.body.contentType : "", "text/plain")
    assert.strictEqual(text.body._tag === "Uint8Array" ? new TextDecoder().decode(text.body.body) : "", "made")
  })

  it("JSON when no content type was kept; empty only when neither a body nor a content type was", () => {
    const json = replay({ status: 200, headers: {}, body: "{}" })
    assert.strictEqual(json.body._tag === "Uint8Array" ? json.body.contentType : "", "application/json")
    const empty = replay({ status: 204, headers: {}, body: "" })
    assert.strictEqual(empty.status, 204)
    assert.strictEqual(empty.body._tag, "Empty")
    assert.strictEqual(empty.headers["idempotent-replayed"], "true")
    const typedEmpty = replay({ status: 200, headers: { "content-type": "text/plain" }, body: "" })
    assert.strictEqual(typedEmpty.body._tag, "Uint8Array")
    assert.strictEqual(typedEmpty.body._tag === "Uint8Array" ? typedEmpty.body.contentType : "", "text/plain")
  })
})
