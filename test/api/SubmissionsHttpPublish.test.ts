/**
 * Publishing a form (forms-runtime.md §2) through HTTP: the start message the sandbox received (the
 * form's title and colour, a Start button the runtime answers), the publications list, the audit
 * entries, deleting a publication (also one already gone on the platform), and every refusal in
 * the envelope with nothing stored and nothing posted.
 */
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { BotId, FormId, ServerId } from "../../src/domain/infra/Ids.ts"
import { ALICE_ID, BOB_ID, BOT1_ID, S1_ID } from "../../src/sandbox/seed/Ids.ts"
import { raw, tokenOf, typedClient } from "../utils/TestApp.ts"
import { CATEGORY, call, channelMessages, createForm, FEEDS, FORMS, GENERAL, NEWS, submissionsOverHttp, VOICE } from "./SubmissionsHttpFixtures.ts"

const params = (formId: number) => ({ appClientId: BotId.make(BOT1_ID), serverId: ServerId.make(S1_ID), formId: FormId.make(formId) })
const paths = (body: any) => (body.errors as Array<any>).map((e) => e.additionalProperties?.path)

submissionsOverHttp("publishing", (it) => {
  it.effect("publish posts the start message, lists it, audits it; delete removes it on the platform and from the list", () =>
    Effect.gen(function*() {
      const token = yield* tokenOf(ALICE_ID)
      const formId = yield* createForm(token, { title: "Beta testers", color_hex: "#ff8800" })
      const client = yield* typedClient(token)

      const published = yield* client.submissions.publish({ params: params(formId), payload: { channel_id: FEEDS } })
      assert.strictEqual(published.channel_id, FEEDS)
      assert.match(published.message_id, /^[0-9]+$/)

      const posted = (yield* channelMessages(FEEDS)).find((m) => m.id === published.message_id)
      assert.isDefined(posted, "the sandbox has the start message in #feeds")
      assert.strictEqual(posted.bot_id, BOT1_ID)
      assert.strictEqual(posted.body.embeds[0].title, "Beta testers")
      assert.strictEqual(posted.body.embeds[0].color, 0xff8800)
      const button = posted.body.components[0].components[0]
      assert.deepInclude(button, { type: 2, label: "Start", custom_id: `f:start:${formId}` })

      // A news channel is publishable too; the list is newest first.
      const second = yield* client.submissions.publish({ params: params(formId), payload: { channel_id: NEWS } })
      const list = yield* client.submissions.publications({ params: params(formId) })
      assert.deepStrictEqual(list.publications.map((p) => [p.channel_id, p.message_id]), [
        [NEWS, second.message_id],
        [FEEDS, published.message_id]
      ])

      const logs = yield* call(token, "GET", `/api/v1/bots/${BOT1_ID}/servers/${S1_ID}/logs?module=forms&page_size=100`)
      const published_ = (logs.body.logs as Array<any>).filter((l) => l.item_identifier === formId && l.event_type === "PATCH")
      assert.sameMembers(published_.map((l) => l.event_string), ["form published in #feeds", "form published in #announcements"])
      assert.strictEqual(published_[0].user_id, ALICE_ID)

      const removed = yield* client.submissions.unpublish({ params: { ...params(formId), messageId: published.message_id } })
      assert.deepStrictEqual(removed, { success: true })
      const after = (yield* channelMessages(FEEDS)).find((m) => m.id === published.message_id)
      assert.isTrue(after.deleted, "the start message is deleted on the platform")
      const left = yield* client.submissions.publications({ params: params(formId) })
      assert.deepStrictEqual(left.publications.map((p) => p.message_id), [second.message_id])

      // Deleted on the platform by someone else first: still removed from the list.
      const gone = yield* raw({ method: "DELETE", headers: { authorization: "Bot sandbox-bot-1.token" } }, `/sandbox/discord/api/v10/channels/${NEWS}/messages/${second.message_id}`)
      assert.strictEqual(gone.status, 204)
      const again = yield* call(token, "DELETE", `${FORMS}/${formId}/publications/${second.message_id}`)
      assert.strictEqual(again.status, 200, JSON.stringify(again.body))
      assert.deepStrictEqual((yield* client.submissions.publications({ params: params(formId) })).publications, [])
      // A second delete of the same message: 404 in the envelope.
      const twice = yield* call(token, "DELETE", `${FORMS}/${formId}/publications/${second.message_id}`)
      assert.strictEqual(twice.status, 404)
      assert.deepStrictEqual(Object.keys(twice.body), ["errors"])
    }))

  it.effect("refusals: the form's missing steps and channel, a channel not of the server or not text/news, bad ids; nothing posted or stored", () =>
    Effect.gen(function*() {
      const token = yield* tokenOf(ALICE_ID)
      const sql = yield* SqlClient.SqlClient
      const bare = yield* createForm(token, { title: "Bare", workflow_live: false, channel_id: null, steps: [] })
      const ok = yield* createForm(token, { title: "Ready" })
      const countRows = Effect.map(sql<{ n: string }>`SELECT count(*)::text AS n FROM form_publications`, (r) => Number(r[0]!.n))
      const countAudit = Effect.map(sql<{ n: string }>`SELECT count(*)::text AS n FROM audit_entries`, (r) => Number(r[0]!.n))
      const countPosted = Effect.map(Effect.all([channelMessages(GENERAL), channelMessages(FEEDS)]), ([a, b]) => a.length + b.length)
      const before = [yield* countRows, yield* countAudit, yield* countPosted]

      const both = yield* call(token, "POST", `${FORMS}/${bare}/publish`, { channel_id: VOICE })
      assert.strictEqual(both.status, 400)
      assert.sameMembers(paths(both.body), ["channel_id", "form.steps", "form.channel_id"], JSON.stringify(both.body))
      for (const e of both.body.errors) assert.strictEqual(e.code, "Bad Request")

      for (const [channel, why] of [[VOICE, "voice"], [CATEGORY, "category"], ["399999999999999999", "not of the server"]] as const) {
        const r = yield* call(token, "POST", `${FORMS}/${ok}/publish`, { channel_id: channel })
        assert.strictEqual(r.status, 400, why)
        assert.deepStrictEqual(paths(r.body), ["channel_id"], why)
      }
      const malformed = yield* call(token, "POST", `${FORMS}/${ok}/publish`, { channel_id: "general" })
      assert.strictEqual(malformed.status, 400)
      assert.deepStrictEqual(paths(malformed.body), ["channel_id"])
      const noBody = yield* call(token, "POST", `${FORMS}/${ok}/publish`, {})
      assert.strictEqual(noBody.status, 400)

      assert.strictEqual((yield* call(undefined, "POST", `${FORMS}/${ok}/publish`, { channel_id: GENERAL })).status, 401)
      // Bob may not manage server 1's forms module.
      const bob = yield* tokenOf(BOB_ID)
      assert.strictEqual((yield* call(bob, "POST", `${FORMS}/${ok}/publish`, { channel_id: GENERAL })).status, 403)
      assert.strictEqual((yield* call(bob, "GET", `${FORMS}/${ok}/publications`)).status, 403)
      assert.strictEqual((yield* call(token, "POST", `${FORMS}/999999/publish`, { channel_id: GENERAL })).status, 404)
      assert.strictEqual((yield* call(token, "GET", `${FORMS}/999999/publications`)).status, 404)
      assert.strictEqual((yield* call(token, "DELETE", `${FORMS}/${ok}/publications/12345`)).status, 404)
      const badId = yield* call(token, "DELETE", `${FORMS}/${ok}/publications/01`)
      assert.strictEqual(badId.status, 400)
      assert.deepStrictEqual(paths(badId.body), ["messageId"])

      assert.deepStrictEqual([yield* countRows, yield* countAudit, yield* countPosted], before, "nothing stored, audited or posted")
    }))

  it.effect("a channel the platform refuses (403): the envelope says so, nothing stored", () =>
    Effect.gen(function*() {
      const token = yield* tokenOf(ALICE_ID)
      const formId = yield* createForm(token, { title: "Refused" })
      const fault = yield* raw({
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ route: "POST /channels/{id}/messages", kind: "403", count: 1 })
      }, "/sandbox/faults")
      assert.strictEqual(fault.status, 200)
      const r = yield* call(token, "POST", `${FORMS}/${formId}/publish`, { channel_id: FEEDS })
      assert.strictEqual(r.status, 403, JSON.stringify(r.body))
      assert.match(r.body.errors[0].message, /may not post in #feeds/)
      const list = yield* call(token, "GET", `${FORMS}/${formId}/publications`)
      assert.deepStrictEqual(list.body, { publications: [] })
    }))

  it.effect("a publish retried with its Idempotency-Key posts once and answers the same message", () =>
    Effect.gen(function*() {
      const token = yield* tokenOf(ALICE_ID)
      const formId = yield* createForm(token, { title: "Retried" })
      const key = { "idempotency-key": `publish-${formId}` }
      const first = yield* call(token, "POST", `${FORMS}/${formId}/publish`, { channel_id: GENERAL }, key)
      const again = yield* call(token, "POST", `${FORMS}/${formId}/publish`, { channel_id: GENERAL }, key)
      assert.strictEqual(first.status, 200, JSON.stringify(first.body))
      assert.deepStrictEqual(again.body, first.body)
      const posted = (yield* channelMessages(GENERAL)).filter((m) => m.body.embeds?.[0]?.title === "Retried")
      assert.strictEqual(posted.length, 1)
      const list = yield* call(token, "GET", `${FORMS}/${formId}/publications`)
      assert.strictEqual(list.body.publications.length, 1)
    }))

  it.effect("a publication the database cannot record: 503, and its start message is deleted again", () =>
    Effect.gen(function*() {
      const token = yield* tokenOf(ALICE_ID)
      const sql = yield* SqlClient.SqlClient
      const formId = yield* createForm(token, { title: "Unrecorded" })
      // The storage "shutting down" (57P03, a 503) at the publication's insert.
      yield* sql.unsafe(`CREATE FUNCTION refuse_publication() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'not now' USING ERRCODE = '57P03'; END $$`)
      yield* sql.unsafe(`CREATE TRIGGER refuse_publication BEFORE INSERT ON form_publications FOR EACH ROW EXECUTE FUNCTION refuse_publication()`)
      const r = yield* call(token, "POST", `${FORMS}/${formId}/publish`, { channel_id: FEEDS })
      yield* sql.unsafe(`DROP TRIGGER refuse_publication ON form_publications`)
      yield* sql.unsafe(`DROP FUNCTION refuse_publication()`)
      assert.strictEqual(r.status, 503, JSON.stringify(r.body))
      const posted = (yield* channelMessages(FEEDS)).filter((m) => m.body.embeds?.[0]?.title === "Unrecorded")
      assert.strictEqual(posted.length, 1, "posted once")
      assert.isTrue(posted[0].deleted, "and deleted again")
      assert.deepStrictEqual((yield* call(token, "GET", `${FORMS}/${formId}/publications`)).body, { publications: [] })
    }))

  it.effect("deleting the form deletes its publications' rows", () =>
    Effect.gen(function*() {
      const token = yield* tokenOf(ALICE_ID)
      const sql = yield* SqlClient.SqlClient
      const formId = yield* createForm(token, { title: "Short-lived" })
      assert.strictEqual((yield* call(token, "POST", `${FORMS}/${formId}/publish`, { channel_id: GENERAL })).status, 200)
      assert.strictEqual((yield* call(token, "DELETE", `${FORMS}/${formId}`)).status, 200)
      const rows = yield* sql`SELECT 1 FROM form_publications WHERE workflow_id = ${formId}`
      assert.strictEqual(rows.length, 0)
    }))
})
