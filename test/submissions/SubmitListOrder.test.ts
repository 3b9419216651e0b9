/**
 * `/submit` lists the server's live forms, at most 25, by title (forms-runtime.md §2). The app is this
 * file's own: the server holds exactly the forms created here. Titles compare as a person reads them:
 * letters whatever their case ("apple" < "Banana" < "cherry"), not by code point (every capital first).
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { dbKinds } from "../utils/Db.ts"
import { TestApp } from "../utils/TestApp.ts"
import { bob, createForm, deleteForm, member } from "./FlowHelpers.ts"
import { waitForKeys } from "./InteractionClient.ts"
import { sandboxSigner as signer } from "./InteractionSigner.ts"
import { twoSteps } from "./PlayerFixtures.ts"

/** The 27 live titles in the order the select must show them (case-insensitive alphabetical). */
const byTitle = [
  "apple", "Banana", "cherry", "Date", "elderberry", "Fig", "grape", "Honeydew", "Iris", "jackfruit", "kiwi", "Lemon",
  "mango", "Nectarine", "olive", "Papaya", "quince", "Raspberry", "strawberry", "Tangerine", "ugli", "Vanilla",
  "watermelon", "Xigua", "yam", "Zucchini", "zulu"
]
/** Created in this order: neither by title nor by its reverse. */
const scrambled = [
  "mango", "Zucchini", "apple", "Tangerine", "Fig", "zulu", "Iris", "cherry", "Vanilla", "yam", "Banana", "quince",
  "Lemon", "olive", "Xigua", "Date", "strawberry", "grape", "Nectarine", "kiwi", "Raspberry", "elderberry", "ugli",
  "Honeydew", "watermelon", "jackfruit", "Papaya"
]
/** Not live, every one sorting before all the live ones: listed, they would push live ones out of the 25. */
const closed = ["Aardvark (closed)", "aaa closed", "Able (closed)", "abacus closed"]

for (const kind of dbKinds) {
  layer(TestApp.layer({ capabilities: { db: kind } }), { excludeTestServices: true })(`/submit's list of forms, on ${kind}`, (it) => {
    it.effect("the first 25 live forms by title, case-insensitively; closed and deleted forms left out", () =>
      Effect.gen(function*() {
        assert.deepStrictEqual([...scrambled].sort(), [...byTitle].sort(), "the fixture lists the same titles twice")
        yield* waitForKeys(signer)
        const ids = new Map<string, number>()
        // Interleaved: a closed one first, and a deleted one between the live ones.
        yield* createForm({ title: closed[0], steps: twoSteps, workflow_live: false })
        for (const [i, title] of scrambled.entries()) {
          ids.set(title, yield* createForm({ title, steps: twoSteps }))
          if (i === 3) yield* createForm({ title: closed[1], steps: twoSteps, workflow_live: false })
          if (i === 10) yield* deleteForm(yield* createForm({ title: "aa deleted", steps: twoSteps }))
          if (i === 20) yield* createForm({ title: closed[2], steps: twoSteps, workflow_live: false })
        }
        yield* createForm({ title: closed[3], steps: twoSteps, workflow_live: false })

        const list = yield* member(signer, bob).command()
        assert.strictEqual(list.type, 4)
        assert.strictEqual(list.data?.flags, 64)
        const select = list.data?.components?.[0]?.components?.[0]
        assert.strictEqual(select?.type, 3)
        assert.strictEqual(select?.custom_id, "f:pick")
        const options = select?.options ?? []
        assert.deepStrictEqual(options.map((o) => o.label), byTitle.slice(0, 25))
        assert.deepStrictEqual(options.map((o) => o.value), byTitle.slice(0, 25).map((t) => String(ids.get(t))))
      }))
  })
}
