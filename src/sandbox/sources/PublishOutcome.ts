/**
 * What publishing an event comes to (Publish.ts): the stored event as answered (201), or the
 * problems in the gateway's envelope (400, 404, 409).
 */
import type { SandboxModule } from "./Store.ts"

export interface Problem {
  readonly message: string
  readonly path?: string | undefined
}

export type Outcome =
  | { readonly status: 201; readonly event: Record<string, unknown> }
  | { readonly status: 400 | 404 | 409; readonly problems: ReadonlyArray<Problem> }

export const fail = (status: 400 | 404 | 409, message: string, path?: string): Outcome => ({ status, problems: [{ message, path }] })

export const iso = (ms: number) => new Date(ms).toISOString()

/** The stored event as answered: §7's fields, with `url` as the connector will report it. */
export const event = (
  module: SandboxModule,
  listed: string,
  sourceId: string,
  fields: {
    readonly id: string
    readonly type: string
    readonly title: string | null
    readonly text: string | null
    readonly url: string
    readonly author: string | null
    readonly flair: string | null
    readonly nsfw: boolean
    readonly game: string | null
    readonly publishedAt: number
    readonly media: ReadonlyArray<string>
  },
  extra: Record<string, unknown> = {}
): Outcome => ({
  status: 201,
  event: {
    id: fields.id,
    module,
    identifier: listed,
    source_id: sourceId,
    type: fields.type,
    title: fields.title,
    text: fields.text,
    url: fields.url,
    author: fields.author,
    flair: fields.flair,
    nsfw: fields.nsfw,
    game: fields.game,
    published_at: iso(fields.publishedAt),
    media: fields.media,
    ...extra
  }
})

