/**
 * Form validation cases issue #19 found unpinned, through the forms service as the PATCH and POST
 * handlers call it (memory repo and audit, fake task board): a string `workflow_id` equal to the
 * path's id, and `channel_id: null`.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import type { BadRequest } from "../../src/domain/infra/Errors.ts"
import { Forms, FormsSettings } from "../../src/services/forms/Forms.ts"
import { AuditLogMemory } from "../layers/AuditLogMemory.ts"
import { FormsRepoMemory } from "../layers/FormsRepoMemory.ts"
import { access, TaskBoardFake, TEXT } from "./FormFixtures.ts"

const paths = (error: BadRequest) => error.problems.map((p) => p.additionalProperties?.["path"])

layer(Forms.layer.pipe(Layer.provide(Layer.mergeAll(FormsRepoMemory, TaskBoardFake, AuditLogMemory, FormsSettings.layerDefaults))))(
  "form validation edges",
  (it) => {
    it.effect("PATCH: a workflow_id string equal to the path's id is accepted; another string or number is refused", () =>
      Effect.gen(function*() {
        const forms = yield* Forms
        const server = access()
        const { workflow_id } = yield* forms.create(server, { title: "Applications", channel_id: TEXT })
        const id = workflow_id!
        const updated = yield* forms.update(server, id, { workflow_id: String(id), title: "Renamed" })
        assert.strictEqual(updated.workflow_id, id)
        assert.strictEqual(updated.title, "Renamed")
        assert.strictEqual((yield* forms.get(server, id)).title, "Renamed")
        for (const other of [String(id + 1), ` ${id}`, `${id}.0`, id + 1]) {
          const refused = yield* Effect.flip(forms.update(server, id, { workflow_id: other, title: "Not me" }))
          assert.strictEqual(refused._tag, "BadRequest")
          assert.deepStrictEqual(paths(refused as BadRequest), ["workflow_id"])
          assert.include((refused as BadRequest).problems[0]!.message, String(id))
        }
        assert.strictEqual((yield* forms.get(server, id)).title, "Renamed")
      }))

    it.effect("channel_id: null is accepted and stored as null; with workflow_live it is refused at channel_id", () =>
      Effect.gen(function*() {
        const forms = yield* Forms
        const server = access()
        const created = yield* forms.create(server, { title: "No channel", channel_id: null })
        assert.strictEqual(created.channel_id, null)
        const id = created.workflow_id!
        const withChannel = yield* forms.update(server, id, { title: "No channel", channel_id: TEXT })
        assert.strictEqual(withChannel.channel_id, TEXT)
        // null clears it again.
        const cleared = yield* forms.update(server, id, { title: "No channel", channel_id: null })
        assert.strictEqual(cleared.channel_id, null)
        assert.strictEqual((yield* forms.get(server, id)).channel_id, null)
        const live = yield* Effect.flip(forms.update(server, id, { title: "Live", workflow_live: true, channel_id: null }))
        assert.strictEqual(live._tag, "BadRequest")
        assert.deepStrictEqual(paths(live as BadRequest), ["channel_id"])
        const absent = yield* Effect.flip(forms.create(server, { title: "Live", workflow_live: true }))
        assert.deepStrictEqual(paths(absent as BadRequest), ["channel_id"])
      }))
  }
)
