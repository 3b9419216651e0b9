/**
 * The forms routes' validation over HTTP, on a real database: every problem in one 400 envelope with
 * its path, messages in words, the server-dependent rules (channels, roles, task boards), lengths in
 * code points, and bodies that are not JSON. Reads: FormsHttpReads.test.ts; writes:
 * FormsHttpWrites.test.ts.
 */
import { assert, describe } from "@effect/vitest"
import { Effect } from "effect"
import { ALICE_ID, BOT2_ID, channelId, roleId, S1_ID, S2_ID } from "../../src/sandbox/Seed.ts"
import { RSS_PATHS } from "../../src/sandbox/sources/Seed.ts"
import { json, raw, TestApp, tokenOf } from "../utils/TestApp.ts"
import { assertBadRequest, call, formsOverHttp, formsPath, REAL_BOARDS, step } from "./FormsHttpFixtures.ts"

const EMOJI = "\u{1F600}" // one code point, two UTF-16 units

formsOverHttp("validation", (it) => {
  describe("validation", () => {
    it.effect("a body with several structural problems lists them all, each with its path", () =>
      Effect.gen(function*() {
        const r = yield* call("POST", formsPath(), {
          title: "",
          color_hex: "red",
          steps: [
            step("ok", { char_limit: [0, 10] }),
            { type: "reaction", string: "no answers", answers_validation: [] },
            { type: "poll", string: "bad type" },
            step("x".repeat(2001))
          ]
        })
        assertBadRequest(r, [
          "title",
          "color_hex",
          "steps[0].char_limit",
          "steps[1].answers_validation",
          "steps[2].type",
          "steps[3].string"
        ], "structural")
      }))

    it.effect("limits: char_limit max > 2000 or max < min, more than 25 steps, alias over 256", () =>
      Effect.gen(function*() {
        const r1 = yield* call("POST", formsPath(), {
          title: "t",
          steps: [step("a", { char_limit: [1, 2001] }), step("b", { char_limit: [10, 5] }), step("c", { char_limit: [1, 2, 3] }), step("d", { alias: "x".repeat(257) })]
        })
        assertBadRequest(r1, ["steps[0].char_limit", "steps[1].char_limit", "steps[2].char_limit[2]", "steps[3].alias"], "limits")
        const r2 = yield* call("POST", formsPath(), { title: "t", steps: Array.from({ length: 26 }, (_, i) => step(`q${i}`)) })
        assertBadRequest(r2, ["steps"], "26 steps")
        const ok = yield* call("POST", formsPath(), { title: "x".repeat(256), steps: Array.from({ length: 25 }, (_, i) => step(`q${i}`, { char_limit: [2000, 2000] })) })
        assert.strictEqual(ok.status, 200, JSON.stringify(ok.body))
      }))

    it.effect("a channel of another server, a voice channel, a category and an unknown role → 400, all listed", () =>
      Effect.gen(function*() {
        const r = yield* call("POST", formsPath(), {
          title: "t",
          channel_id: channelId(2, 2),
          fwd_channel_ids: [channelId(1, 2), channelId(1, 5), channelId(1, 1)],
          role_mentions: [roleId(1, 1), roleId(2, 1)],
          public_mentions: ["123"]
        })
        assertBadRequest(r, ["channel_id", "fwd_channel_ids[1]", "fwd_channel_ids[2]", "role_mentions[1]", "public_mentions[0]"], "server rules")
      }))

    it.effect("workflow_live without channel_id → 400", () =>
      Effect.gen(function*() {
        assertBadRequest(yield* call("POST", formsPath(), { title: "t", workflow_live: true }), ["channel_id"], "live")
      }))

    it.effect("task board: integration with a missing, special or unknown board → 400; without Title → 400; unpaired server → 400", () =>
      Effect.gen(function*() {
        const title = [step("Name", { taskboard_mapping: "Title" })]
        for (const board of [undefined, "0", "-1", "5f1a0000000000000000b003", "nope"]) {
          const r = yield* call("POST", formsPath(), {
            title: "t",
            taskboard_integration: true,
            ...(board === undefined ? {} : { taskboard_board: board }),
            steps: title
          })
          assertBadRequest(r, ["taskboard_board"], `board ${board}`)
        }
        const noTitle = yield* call("POST", formsPath(), {
          title: "t",
          taskboard_integration: true,
          taskboard_board: REAL_BOARDS[1]!.id,
          steps: [step("Name", { taskboard_mapping: "Description" })]
        })
        assertBadRequest(noTitle, ["steps"], "no Title")
        const badMapping = yield* call("POST", formsPath(), { title: "t", steps: [step("Name", { taskboard_mapping: "Cover" })] })
        assertBadRequest(badMapping, ["steps[0].taskboard_mapping"], "mapping")
        const unpaired = yield* call("POST", formsPath(S2_ID), {
          title: "t",
          taskboard_integration: true,
          taskboard_board: REAL_BOARDS[0]!.id,
          steps: title
        })
        assertBadRequest(unpaired, ["taskboard_board"], "unpaired")
        const ok = yield* call("POST", formsPath(), {
          title: "t",
          taskboard_integration: true,
          taskboard_board: REAL_BOARDS[1]!.id,
          steps: title
        })
        assert.strictEqual(ok.status, 200, JSON.stringify(ok.body))
      }))

    it.effect("every problem in one answer: field schemas, rules across fields and the server's rules together (issue #12 item 1)", () =>
      Effect.gen(function*() {
        const before = yield* call("GET", formsPath())
        const voice = channelId(1, 5)
        const mixed = { title: "", channel_id: voice, role_mentions: [roleId(2, 1)] }
        assertBadRequest(yield* call("POST", formsPath(), mixed), ["title", "channel_id", "role_mentions[0]"], "title + voice channel + foreign role")
        assertBadRequest(yield* call("POST", formsPath(), { title: "", workflow_live: true }), ["title", "channel_id"], "title + live without channel")
        assertBadRequest(
          yield* call("POST", formsPath(), {
            title: 5,
            workflow_live: true,
            fwd_channel_ids: [voice, 7, channelId(2, 2)],
            public_mentions: ["x", roleId(2, 1)],
            taskboard_integration: true,
            taskboard_board: "nope",
            steps: [step(""), { type: "poll", string: "q" }]
          }),
          [
            "title", "channel_id", "fwd_channel_ids[0]", "fwd_channel_ids[1]", "fwd_channel_ids[2]", "public_mentions[0]",
            "public_mentions[1]", "taskboard_board", "steps", "steps[0].string", "steps[1].type"
          ],
          "everything at once"
        )
        // PATCH runs every rule too; nothing is written by a refused body.
        const form = yield* call("POST", formsPath(), { title: "Kept" })
        assert.strictEqual(form.status, 200, JSON.stringify(form.body))
        const path = `${formsPath()}/${form.body.workflow_id}`
        assertBadRequest(yield* call("PATCH", path, mixed), ["title", "channel_id", "role_mentions[0]"], "PATCH")
        assert.strictEqual((yield* call("GET", path)).body.title, "Kept")
        assert.strictEqual((yield* call("DELETE", path)).status, 200)
        assert.deepStrictEqual((yield* call("GET", formsPath())).body, before.body)
      }))

    it.effect("messages name the field and what it expects in words, never an internal schema name", () =>
      Effect.gen(function*() {
        const r = yield* call("POST", formsPath(), {
          title: 5,
          workflow_live: "yes",
          color_hex: "#12345",
          steps: [{ type: "poll", alias: 5, taskboard_mapping: "Card" }, "x"]
        })
        assert.strictEqual(r.status, 400, JSON.stringify(r.body))
        for (const e of r.body.errors) {
          const path = e.additionalProperties.path as string
          assert.isTrue(e.message.startsWith(`${path}: `), e.message)
          assert.notMatch(e.message, /FormInput|StepInput|Expected [a-z]+( \||,)|Missing key/, e.message)
        }
        const byPath = Object.fromEntries(r.body.errors.map((e: { message: string; additionalProperties: { path: string } }) => [e.additionalProperties.path, e.message]))
        assert.strictEqual(byPath["title"], "title: expected a text of 1 to 256 characters")
        assert.strictEqual(byPath["workflow_live"], "workflow_live: expected true or false")
        assert.strictEqual(byPath["steps[0].string"], "steps[0].string: is required")
        assert.strictEqual(byPath["steps[1]"], "steps[1]: expected a step: an object with type and string")
        const notObject = yield* call("POST", formsPath(), [])
        assert.strictEqual(notObject.status, 400)
        assert.match(notObject.body.errors[0].message, /JSON object/)
      }))

    it.effect("lengths count code points: 256 emoji are a valid title, 2,000 a valid step; one more is refused", () =>
      Effect.gen(function*() {
        const ok = yield* call("POST", formsPath(S2_ID), {
          title: EMOJI.repeat(256),
          steps: [step(EMOJI.repeat(2000), { alias: EMOJI.repeat(256), answers_validation: [EMOJI.repeat(100)] })]
        })
        assert.strictEqual(ok.status, 200, JSON.stringify(ok.body).slice(0, 500))
        assert.strictEqual(ok.body.title, EMOJI.repeat(256))
        assert.strictEqual(ok.body.steps[0].string, EMOJI.repeat(2000))
        assert.strictEqual((yield* call("DELETE", `${formsPath(S2_ID)}/${ok.body.workflow_id}`)).status, 200)
        const over = yield* call("POST", formsPath(S2_ID), {
          title: EMOJI.repeat(257),
          steps: [step(EMOJI.repeat(2001), { alias: EMOJI.repeat(257), answers_validation: [EMOJI.repeat(101)] })]
        })
        assertBadRequest(over, ["title", "steps[0].string", "steps[0].alias", "steps[0].answers_validation[0]"], "one code point over")
      }))

    it.effect("feed option limits count code points too: 600 emoji are a valid custom_header (limit 1,024)", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const rss = `/api/v1/bots/${BOT2_ID}/servers/${S1_ID}/modules/rss/feeds`
        const created = yield* call("POST", rss, {
          feed_identifier: `${app.url}${RSS_PATHS.rss}`,
          webhook_channel: channelId(1, 3),
          webhook_options: { custom_header: EMOJI.repeat(600), "webhook-name": EMOJI.repeat(32), filter_words: [EMOJI.repeat(100)] }
        })
        assert.strictEqual(created.status, 200, JSON.stringify(created.body).slice(0, 500))
        assert.strictEqual(created.body.webhook_options.custom_header, EMOJI.repeat(600))
        assert.strictEqual((yield* call("DELETE", `${rss}/${created.body.id}`)).status, 200)
        const over = yield* call("POST", rss, {
          feed_identifier: `${app.url}${RSS_PATHS.rss}`,
          webhook_channel: channelId(1, 3),
          webhook_options: { custom_header: EMOJI.repeat(1025), "webhook-name": EMOJI.repeat(33), filter_words: [EMOJI.repeat(101)] }
        })
        assertBadRequest(over, [
          "webhook_options.custom_header",
          "webhook_options.webhook-name",
          "webhook_options.filter_words[0]"
        ], "feed options one code point over")
      }))

    it.effect("color_hex upper case is stored and listed lower case; board 0 on a server without a paired team → 400", () =>
      Effect.gen(function*() {
        const created = yield* call("POST", formsPath(S2_ID), { title: "Colour", color_hex: "#A1B2C3" })
        assert.strictEqual(created.status, 200, JSON.stringify(created.body))
        assert.strictEqual(created.body.color_hex, "#a1b2c3")
        const listed = (yield* call("GET", formsPath(S2_ID))).body.forms.find((f: { workflow_id: number }) => f.workflow_id === created.body.workflow_id)
        assert.strictEqual(listed.color_hex, "#a1b2c3")
        assert.strictEqual((yield* call("DELETE", `${formsPath(S2_ID)}/${created.body.workflow_id}`)).status, 200)
        // S2 has no paired team: only -1 is a board there (decisions.md "Forms").
        const zero = yield* call("POST", formsPath(S2_ID), { title: "Board", taskboard_board: "0" })
        assertBadRequest(zero, ["taskboard_board"], "board 0 unpaired")
        const none = yield* call("POST", formsPath(S2_ID), { title: "Board", taskboard_board: "-1" })
        assert.strictEqual(none.status, 200, JSON.stringify(none.body))
        assert.strictEqual((yield* call("DELETE", `${formsPath(S2_ID)}/${none.body.workflow_id}`)).status, 200)
      }))

    it.effect("malformed JSON → 400, a non-JSON content type → 415", () =>
      Effect.gen(function*() {
        const token = yield* tokenOf(ALICE_ID)
        const bad = yield* raw({ token, method: "POST", body: "{", headers: { "content-type": "application/json" } }, formsPath())
        assert.strictEqual(bad.status, 400)
        assert.strictEqual((yield* json(bad)).errors[0].code, "Bad Request")
        const text = yield* raw({ token, method: "POST", body: "title=x", headers: { "content-type": "text/plain" } }, formsPath())
        assert.strictEqual(text.status, 415)
      }))

    it.effect("U+0000 in a string → 400 at its path on POST and PATCH (never 500/503), nothing written", () =>
      Effect.gen(function*() {
        const before = yield* call("GET", formsPath(S2_ID))
        const created = yield* call("POST", formsPath(S2_ID), { title: "a\u0000b", steps: [step("ok"), step("b\u0000")] })
        assertBadRequest(created, ["title", "steps[1].string"], "POST with U+0000")
        assert.deepStrictEqual((yield* call("GET", formsPath(S2_ID))).body, before.body)

        const form = yield* call("POST", formsPath(S2_ID), { title: "clean" })
        assert.strictEqual(form.status, 200, JSON.stringify(form.body))
        const id = form.body.workflow_id
        assertBadRequest(yield* call("PATCH", `${formsPath(S2_ID)}/${id}`, { title: "\u0000" }), ["title"], "PATCH with U+0000")
        const read = yield* call("GET", `${formsPath(S2_ID)}/${id}`)
        assert.strictEqual(read.body.title, "clean")
        assert.strictEqual((yield* call("DELETE", `${formsPath(S2_ID)}/${id}`)).status, 200)
      }))
  })
})
