/**
 * Shared setup of the SubmissionsHttp*.test.ts files: the gateway in-process on a real database
 * (PGlite, and PostgreSQL when TEST_DATABASE_URL is set), forms created through the API as Alice,
 * and submissions stored as the forms runtime stores them (a draft, then its submission with the
 * review message's job), so the worker posts their review messages to the sandbox.
 */
import { layer } from "@effect/vitest"
import { Effect, Option } from "effect"
import { randomBytes } from "node:crypto"
import { ReviewQueue, jobId } from "../../src/layers/submissions/SubmissionJobs.ts"
import { BOT1_ID, CHANNEL_INDEX, channelId, roleId, S1_ID } from "../../src/sandbox/seed/Ids.ts"
import { FormsRepo } from "../../src/services/forms/FormsRepo.ts"
import { JobEngine } from "../../src/services/jobs/JobEngine.ts"
import { SubmissionsRepo } from "../../src/services/submissions/SubmissionsRepo.ts"
import type { DbKind } from "../utils/Db.ts"
import { dbKinds } from "../utils/Db.ts"
import { json, raw, TestApp } from "../utils/TestApp.ts"

export const FORMS = `/api/v1/bots/${BOT1_ID}/servers/${S1_ID}/modules/forms`
export const GENERAL = channelId(1, CHANNEL_INDEX.text)
export const FEEDS = channelId(1, CHANNEL_INDEX.text2)
export const NEWS = channelId(1, CHANNEL_INDEX.news)
export const VOICE = channelId(1, CHANNEL_INDEX.voice)
export const CATEGORY = channelId(1, CHANNEL_INDEX.category)
export const MODERATORS = roleId(1, 1)

export const formBody = (over: Record<string, unknown> = {}) => ({
  title: "Staff application",
  workflow_live: true,
  channel_id: GENERAL,
  role_mentions: [MODERATORS],
  color_hex: "#3366ff",
  steps: [
    { type: "message", string: "Your name?", char_limit: [1, 100] },
    { type: "message", string: "Why do you want to join?", char_limit: [1, 1000], alias: "Motivation" },
    { type: "message", string: "Your e-mail address?", char_limit: [1, 100], taskboard_mapping: "Private" }
  ],
  ...over
})

/** A request with `token` (none: unsigned); the body, if any, as JSON. */
export const call = (token: string | undefined, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
  Effect.gen(function*() {
    const init: RequestInit & { token?: string } = { method, headers: { ...headers } }
    if (token !== undefined) init.token = token
    if (body !== undefined) {
      init.body = typeof body === "string" ? body : JSON.stringify(body)
      init.headers = { "content-type": "application/json", ...headers }
    }
    const res = yield* raw(init, path)
    const text = yield* Effect.promise(() => res.text())
    return { status: res.status, body: text === "" ? undefined : JSON.parse(text) as any }
  })

export const createForm = (token: string, over: Record<string, unknown> = {}) =>
  Effect.gen(function*() {
    const r = yield* call(token, "POST", FORMS, formBody(over))
    if (r.status !== 200) throw new Error(`create answered ${r.status}: ${JSON.stringify(r.body)}`)
    return r.body.workflow_id as number
  })

/**
 * A submission of `formId` by `user`, stored as the runtime stores it (draft, then the submission
 * and its pending review message), its review job not sent: its id.
 */
export const storeSubmission = (formId: number, user: { readonly id: string; readonly name: string }, answers: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const forms = yield* FormsRepo
    const repo = yield* SubmissionsRepo
    const form = Option.getOrThrow(yield* forms.find({ botId: BOT1_ID, serverId: S1_ID }, formId))
    const byStep = Object.fromEntries(form.steps.map((s, i) => [String(s.step_id), answers[i] ?? ""]))
    const draft = yield* repo.startDraft({
      id: randomBytes(16).toString("base64url"),
      workflowId: formId,
      userId: user.id,
      snapshot: form,
      answers: {},
      page: 0,
      expiresAt: new Date(Date.now() + 60_000)
    })
    const id = yield* repo.submit(
      { draft, botId: BOT1_ID, serverId: S1_ID, userName: user.name, userAvatar: null, answers: byStep },
      (id) => ({
        botId: BOT1_ID,
        serverId: S1_ID,
        actor: { userId: user.id, userName: user.name, avatar: null },
        module: "forms",
        itemIdentifier: formId,
        eventType: "PUSH",
        eventString: `submission ${id} received`
      })
    )
    if (id === undefined) throw new Error("the member already has a pending submission")
    return id
  })

/** `storeSubmission`, its review message queued: its id. */
export const seedSubmission = (formId: number, user: { readonly id: string; readonly name: string }, answers: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const jobs = yield* JobEngine
    yield* Effect.orDie(jobs.declare(ReviewQueue))
    const id = yield* storeSubmission(formId, user, answers)
    yield* Effect.orDie(jobs.send(ReviewQueue, { submission_id: id }, { id: jobId("review", id) }))
    return id
  })

/** The sandbox's record of the bots' messages in a channel (what a person would see). */
export const channelMessages = (channel: string) =>
  Effect.gen(function*() {
    const res = yield* raw({}, `/sandbox/discord/messages?channel_id=${channel}`)
    return ((yield* json(res)).messages as Array<any>).filter((m) => m.bot_id !== undefined)
  })

/** Polls `read` until `done` holds (jobs run on the worker): at most ~10 s. */
export const eventually = <A, E, R>(read: Effect.Effect<A, E, R>, done: (a: A) => boolean) =>
  Effect.gen(function*() {
    for (let i = 0; ; i++) {
      const a = yield* read
      if (done(a) || i >= 100) return a
      yield* Effect.sleep("100 millis")
    }
  })

const app = (db: DbKind) => layer(TestApp.layer({ capabilities: { db } }), { excludeTestServices: true, timeout: 120_000 })
export type SubmissionsIt = Parameters<Parameters<ReturnType<typeof app>>[1]>[0]

/** One suite per database kind, each on an app (and a database) of its own. */
export const submissionsOverHttp = (topic: string, tests: (it: SubmissionsIt) => void) => {
  for (const db of dbKinds) app(db)(`submissions over HTTP: ${topic} (${db})`, tests)
}
