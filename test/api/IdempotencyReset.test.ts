/**
 * A client whose connection was reset finds out (issue #30): the create's socket is destroyed
 * right after the request was sent (the write may or may not have happened) or as the answer
 * arrives (it happened, the answer is lost); a retry with the same key then answers the one form
 * (an atomic key) or the one feed (a claimed key) that exists, and never makes a second. PGlite
 * and PostgreSQL.
 */
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { randomUUID } from "node:crypto"
import { request } from "node:http"
import { ALICE_ID, channelId } from "../../src/sandbox/Seed.ts"
import { RSS_PATHS } from "../../src/sandbox/sources/Seed.ts"
import { TestApp, tokenOf, UA } from "../utils/TestApp.ts"
import { feedsOverHttp, modulePath } from "./FeedsHttpFixtures.ts"
import { formsOverHttp, formsPath } from "./FormsHttpFixtures.ts"
import { countsOf, form, send } from "./IdempotencyFixtures.ts"

/** Sends the create and destroys the socket `when` says; resolves once the socket is closed. */
const sendAndCut = (url: string, token: string, key: string, body: string, when: "sent" | "answering") =>
  new Promise<void>((resolve) => {
    const req = request(url, {
      method: "POST",
      headers: { "content-type": "application/json", "idempotency-key": key, authorization: `Bearer ${token}`, "user-agent": UA }
    })
    req.on("error", () => {})
    req.on("close", () => resolve())
    if (when === "answering") req.on("response", () => req.destroy())
    req.end(body, () => {
      if (when === "sent") req.destroy()
    })
  })

/** The retry a client makes: again while the first is in flight (409), until it is answered. */
const retry = (key: string, body: unknown, path: string) =>
  Effect.gen(function*() {
    // Up to 20 s: on a loaded machine the cut request may still be running (its write, then its commit's flush).
    for (let i = 0; i < 400; i++) {
      const r = yield* send("POST", path, key, body)
      if (r.status !== 409) return r
      yield* Effect.sleep("50 millis")
    }
    throw new Error("still in flight after 20 s")
  })

/**
 * Cuts the create at `path` `when` said, then retries it with its key until answered: the answer,
 * a 200, replayed when the first was cut as it was answered (its write done).
 */
const cutThenRetry = (path: string, key: string, body: unknown, when: "sent" | "answering") =>
  Effect.gen(function*() {
    const app = yield* TestApp
    const token = yield* tokenOf(ALICE_ID)
    yield* Effect.promise(() => sendAndCut(app.url + path, token, key, JSON.stringify(body), when))
    const again = yield* retry(key, body, path)
    assert.strictEqual(again.status, 200, again.text)
    if (when === "answering") assert.strictEqual(again.replayed, "true")
    return again
  })

const storedIds = (title: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(sql<{ id: string }>`SELECT workflow_id::text AS id FROM forms WHERE title = ${title}`, (rows) => rows.map((r) => Number(r.id))))

formsOverHttp("idempotency after a connection reset", (it) => {
  for (const when of ["sent", "answering"] as const) {
    it.effect(`socket destroyed once the request was ${when}: the retry answers the one form`, () =>
      Effect.gen(function*() {
        const key = randomUUID()
        const title = `Reset ${when} ${key}`
        const again = yield* cutThenRetry(formsPath(), key, form(title), when)
        const ids = yield* storedIds(title)
        assert.deepStrictEqual(ids, [JSON.parse(again.text).workflow_id])
        assert.deepStrictEqual(yield* countsOf(title), { forms: 1, audits: 1 })
      }))
  }
})

feedsOverHttp("idempotency after a connection reset", (it) => {
  for (const when of ["sent", "answering"] as const) {
    it.effect(`socket destroyed once the request was ${when}: the retry answers the one feed`, () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const key = randomUUID()
        const body = { feed_identifier: `${app.url}${RSS_PATHS.rss}?k=${key}`, webhook_channel: channelId(1, 2) }
        const again = yield* cutThenRetry(`${modulePath("rss")}/feeds`, key, body, when)
        const sql = yield* SqlClient.SqlClient
        const stored = yield* sql<{ id: string }>`SELECT id::text AS id FROM feeds WHERE feed_identifier = ${body.feed_identifier}`
        assert.deepStrictEqual(stored.map((r) => r.id), [String(JSON.parse(again.text).id)])
      }))
  }
})
