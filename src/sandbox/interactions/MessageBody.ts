/**
 * A message body as the platform reads it: JSON, or multipart/form-data with `payload_json` and
 * `files[n]` (each file an attachment with an id of its own, a snowflake as on Discord, its bytes
 * kept for its URL: Attachments.ts; `attachments[].id` of the payload names the n of `files[n]`); checked against the request
 * schema of openapi.json for its route, refused like Discord (400 50035 "Invalid Form Body" with the
 * problems under `errors`, 50006 for an empty message).
 */
import { Effect } from "effect"
import type { HttpServerRequest, HttpServerResponse } from "effect/http"
import { checkSchema } from "../DiscordSchemaCheck.ts"
import { discordError, Errors } from "../DiscordHttp.ts"
import { invalidFormBody } from "../InvalidFormBody.ts"
import type { DiscordStore } from "../DiscordState.ts"
import { checkMessage } from "../DiscordMessage.ts"
import type { MessageRoute } from "../MessageRules.ts"
import { Flags, isEmptyMessage, messageProblems } from "../MessageRules.ts"
import { REQUEST_SCHEMAS } from "./RequestSchemas.ts"
import type { Body } from "./State.ts"
import { interactionsOf } from "./State.ts"

export { invalidFormBody } from "../InvalidFormBody.ts"

export type Read =
  | { readonly ok: true; readonly body: Body }
  | { readonly ok: false; readonly error: HttpServerResponse.HttpServerResponse }

const isObject = (u: unknown): u is Body => typeof u === "object" && u !== null && !Array.isArray(u)

/** The JSON body, or a multipart upload's `payload_json` with its files as `attachments` (their bytes kept in `store`). */
export const readBody = (store: DiscordStore, request: HttpServerRequest.HttpServerRequest): Effect.Effect<Read> => {
  const type = request.headers["content-type"] ?? ""
  if (!type.startsWith("multipart/form-data")) {
    return request.json.pipe(
      Effect.map((body): Read => isObject(body) ? { ok: true, body } : { ok: false, error: Errors.invalidJson() }),
      Effect.catch(() => Effect.succeed<Read>({ ok: false, error: Errors.invalidJson() }))
    )
  }
  return request.arrayBuffer.pipe(
    Effect.flatMap((buffer) =>
      Effect.tryPromise(async () => {
        const form = await new Response(buffer, { headers: { "content-type": type } }).formData()
        const files: Array<{ index: string; filename: string; bytes: Uint8Array }> = []
        for (const [key, value] of form.entries()) {
          const index = /^files\[(\d+)\]$/.exec(key)?.[1]
          if (index !== undefined && typeof value !== "string") files.push({ index, filename: value.name, bytes: new Uint8Array(await value.arrayBuffer()) })
        }
        return { payload: form.get("payload_json"), files }
      })
    ),
    Effect.map(({ files, payload }): Read => {
      const body: unknown = typeof payload === "string" ? JSON.parse(payload) : {}
      if (!isObject(body)) return { ok: false, error: Errors.invalidJson() }
      if (files.length === 0) return { ok: true, body }
      const described = Array.isArray(body["attachments"]) ? body["attachments"].filter(isObject) : []
      const state = interactionsOf(store)
      const attachments = files.map((f) => {
        // The platform gives each uploaded file its own id; the payload's id only named its files[n].
        const id = state.nextId("39")
        state.files.set(id, f.bytes)
        return { ...described.find((d) => String(d["id"]) === f.index), id, filename: f.filename, size: f.bytes.byteLength }
      })
      return { ok: true, body: { ...body, attachments } }
    }),
    Effect.catch(() => Effect.succeed<Read>({ ok: false, error: Errors.invalidJson() }))
  )
}

/** Discord's checks of a new message (`schema`: the route's request schema in openapi.json; `route`: which flags it takes). */
export const checkNewMessage = (body: Body, schema: string, route: MessageRoute): HttpServerResponse.HttpServerResponse | undefined =>
  checkMessage(body, route, (b) => checkSchema(REQUEST_SCHEMAS, schema, b)).error

const flagsOf = (body: Body): number => (typeof body["flags"] === "number" ? body["flags"] : 0)

/** An edit applied: the fields it names replace the message's, the others stay; IS_COMPONENTS_V2, once set, stays. */
export const applyEdit = (previous: Body, edit: Body): Body => {
  const after = { ...previous, ...edit }
  const v2 = flagsOf(previous) & Flags.IS_COMPONENTS_V2
  return v2 !== 0 && (flagsOf(after) & v2) === 0 ? { ...after, flags: flagsOf(after) | v2 } : after
}

/**
 * Discord's checks of an edit of `previous`: the edit against the schema (it may change one field),
 * the message it leaves against the rules (MessageRules.ts: content at most 2,000 characters, as the
 * Edit Message documentation says where MessageEditRequestPartial allows 4,000; IS_COMPONENTS_V2
 * cannot be removed), and 50006 when it leaves nothing to show.
 */
export const checkEdit = (previous: Body, edit: Body, schema: string): HttpServerResponse.HttpServerResponse | undefined => {
  const after = applyEdit(previous, edit)
  const v2 = ((flagsOf(previous) | flagsOf(edit)) & Flags.IS_COMPONENTS_V2) !== 0
  const problems = [...checkSchema(REQUEST_SCHEMAS, schema, edit), ...messageProblems(after, "edit", { v2 })]
  if (problems.length > 0) return invalidFormBody(problems)
  return isEmptyMessage(after) ? discordError(400, "Cannot send an empty message", 50006) : undefined
}
