/**
 * A deterministic in-memory FormsRepo for in-process API tests: ids count from 1, timestamps come
 * from the Clock (TestClock when present). `transaction` runs one writer at a time and restores the
 * previous state when its effect fails, like a rollback. Transactions must not nest. A string the
 * database could not store (U+0000) is refused as FormsRepoSql refuses it, with the same 400.
 */
import { Clock, Effect, Layer, Option, Ref, Semaphore } from "effect"
import type { StoredForm } from "../../src/domain/forms/Form.ts"
import { FormsLimitReached, FormsRepo } from "../../src/services/forms/FormsRepo.ts"
import type { FormData, FormScope } from "../../src/services/forms/FormsRepo.ts"
import { rejectedValue, unstorablePaths } from "../../src/layers/infra/SqlFailure.ts"

interface Entry {
  readonly scope: FormScope
  readonly form: StoredForm
}

interface State {
  readonly nextId: number
  readonly forms: ReadonlyMap<number, Entry>
}

const inScope = (entry: Entry | undefined, scope: FormScope): entry is Entry =>
  entry !== undefined && entry.scope.botId === scope.botId && entry.scope.serverId === scope.serverId

const storable = (data: FormData) =>
  unstorablePaths(data).length === 0 ? Effect.void : Effect.fail(rejectedValue({ input: data }))

const toStored = (id: number, created: string, data: FormData): StoredForm => ({
  ...data,
  workflow_id: id,
  timestamp_created: created,
  steps: data.steps.map((s, i) => ({ ...s, step_id: i + 1 }))
})

export const makeFormsRepoMemory = Effect.gen(function*() {
  const state = yield* Ref.make<State>({ nextId: 1, forms: new Map() })
  const lock = yield* Semaphore.make(1)

  const find = (scope: FormScope, id: number) =>
    Effect.map(Ref.get(state), (s) => {
      const entry = s.forms.get(id)
      return inScope(entry, scope) ? Option.some(entry.form) : Option.none()
    })

  return FormsRepo.of({
    list: (scope) =>
      Effect.map(Ref.get(state), (s) =>
        [...s.forms.values()]
          .filter((e) => inScope(e, scope))
          .sort((a, b) => a.form.workflow_id - b.form.workflow_id)
          .map(({ form }) => ({
            workflow_id: form.workflow_id,
            taskboard_integration: form.taskboard_integration,
            workflow_live: form.workflow_live,
            title: form.title,
            color_hex: form.color_hex
          }))),
    find,
    create: (scope, data, limit) =>
      Effect.andThen(storable(data), Clock.currentTimeMillis).pipe(Effect.flatMap((now) =>
        // Count and insert in one atomic step, like the SQL layer's lock.
        Ref.modify(state, (s): [StoredForm | undefined, State] => {
          const held = [...s.forms.values()].filter((e) => inScope(e, scope)).length
          if (limit !== undefined && held >= limit) return [undefined, s]
          const form = toStored(s.nextId, new Date(now).toISOString(), data)
          const forms = new Map(s.forms).set(form.workflow_id, { scope, form })
          return [form, { nextId: s.nextId + 1, forms }]
        })),
        Effect.flatMap((form) => form === undefined ? Effect.fail(new FormsLimitReached({ limit: limit ?? 0 })) : Effect.succeed(form))),
    update: (scope, id, data) =>
      Effect.andThen(storable(data), Ref.modify(state, (s) => {
        const entry = s.forms.get(id)
        if (!inScope(entry, scope)) return [Option.none(), s]
        const form = toStored(id, entry.form.timestamp_created, data)
        return [Option.some(form), { ...s, forms: new Map(s.forms).set(id, { scope, form }) }]
      })),
    remove: (scope, id) =>
      Ref.modify(state, (s) => {
        const entry = s.forms.get(id)
        if (!inScope(entry, scope)) return [Option.none(), s]
        const forms = new Map(s.forms)
        forms.delete(id)
        return [Option.some(entry.form), { ...s, forms }]
      }),
    transaction: (self) =>
      lock.withPermit(Effect.gen(function*() {
        const before = yield* Ref.get(state)
        return yield* Effect.onError(self, () => Ref.set(state, before))
      }))
  })
})

export const FormsRepoMemory = Layer.effect(FormsRepo, makeFormsRepoMemory)
