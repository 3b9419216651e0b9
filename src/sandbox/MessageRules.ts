/**
 * What Discord refuses in a message body beyond its OpenAPI schema (developer documentation:
 * resources/message "Embed Limits", "Allowed Mentions Object", "Create Message" and "Edit Message";
 * resources/webhook "Execute Webhook"; interactions/receiving-and-responding "Messages" and "Create
 * Followup Message"; components/reference "Custom ID", "Action Row", "Button", "Legacy Message
 * Component Behavior"). Every problem found is returned as `path: message (CODE)` (InvalidFormBody.ts);
 * where one repeats a schema limit it is worded as DiscordSchemaCheck.ts words it, so the two merge.
 */

type Body = Readonly<Record<string, unknown>>

const isObject = (u: unknown): u is Body => typeof u === "object" && u !== null && !Array.isArray(u)
const list = (u: unknown): ReadonlyArray<unknown> => (Array.isArray(u) ? u : [])
const present = (u: unknown) => u !== undefined && u !== null
const filled = (u: unknown) => present(u) && u !== "" && !(Array.isArray(u) && u.length === 0)
const length = (u: unknown) => (typeof u === "string" ? [...u.trim()].length : 0)

export const Flags = {
  SUPPRESS_EMBEDS: 1 << 2,
  EPHEMERAL: 1 << 6,
  SUPPRESS_NOTIFICATIONS: 1 << 12,
  IS_VOICE_MESSAGE: 1 << 13,
  IS_COMPONENTS_V2: 1 << 15
} as const

/**
 * Where a message is sent, which decides the flags it may set: Create Message (SUPPRESS_EMBEDS,
 * SUPPRESS_NOTIFICATIONS, IS_VOICE_MESSAGE, IS_COMPONENTS_V2), Execute Webhook (no voice message), a
 * follow-up (Execute Webhook's and EPHEMERAL), an interaction's answer (all five). An edit keeps or
 * sets flags on an existing message: not checked here.
 */
export type MessageRoute = "create" | "execute" | "followup" | "answer" | "edit"

const { EPHEMERAL, IS_COMPONENTS_V2, IS_VOICE_MESSAGE, SUPPRESS_EMBEDS, SUPPRESS_NOTIFICATIONS } = Flags
const ALLOWED_FLAGS: Readonly<Record<MessageRoute, number | undefined>> = {
  create: SUPPRESS_EMBEDS | SUPPRESS_NOTIFICATIONS | IS_VOICE_MESSAGE | IS_COMPONENTS_V2,
  execute: SUPPRESS_EMBEDS | SUPPRESS_NOTIFICATIONS | IS_COMPONENTS_V2,
  followup: SUPPRESS_EMBEDS | SUPPRESS_NOTIFICATIONS | IS_COMPONENTS_V2 | EPHEMERAL,
  answer: SUPPRESS_EMBEDS | SUPPRESS_NOTIFICATIONS | IS_VOICE_MESSAGE | IS_COMPONENTS_V2 | EPHEMERAL,
  edit: undefined
}

const FLAG_NAMES: ReadonlyArray<readonly [number, string]> = Object.entries(Flags).map(([name, bit]) => [bit, name] as const)

/** The sum Discord counts across all embeds: title, description, field names and values, footer text, author name, trimmed. */
export const embedsLength = (embeds: unknown): number =>
  list(embeds).filter(isObject).reduce((sum, e) =>
    sum + length(e["title"]) + length(e["description"]) +
    list(e["fields"]).filter(isObject).reduce((n, f) => n + length(f["name"]) + length(f["value"]), 0) +
    (isObject(e["footer"]) ? length(e["footer"]["text"]) : 0) +
    (isObject(e["author"]) ? length(e["author"]["name"]) : 0), 0)

const SELECTS = new Set([3, 5, 6, 7, 8])

/** A button's fields by style: custom_id for 1–4, url for 5 (link), sku_id for 6 (premium). */
const buttonProblems = (b: Body, path: string): Array<string> => {
  const out: Array<string> = []
  const style = b["style"]
  const refuse = (key: string, what: string) => {
    if (present(b[key])) out.push(`${path}.${key}: ${what} cannot have a ${key} (BUTTON_COMPONENT_INVALID_FIELD)`)
  }
  if (style === 5) {
    if (!filled(b["url"])) out.push(`${path}.url: A link button needs a url (BUTTON_COMPONENT_URL_REQUIRED)`)
    refuse("custom_id", "a link button")
    refuse("sku_id", "a link button")
  } else if (style === 6) {
    if (!filled(b["sku_id"])) out.push(`${path}.sku_id: A premium button needs a sku_id (BUTTON_COMPONENT_SKU_ID_REQUIRED)`)
    for (const key of ["custom_id", "label", "url", "emoji"]) refuse(key, "a premium button")
  } else if (typeof style === "number" && style >= 1 && style <= 4) {
    if (!filled(b["custom_id"])) out.push(`${path}.custom_id: A custom id is required (BUTTON_COMPONENT_CUSTOM_ID_REQUIRED)`)
    refuse("url", "a non-link button")
    refuse("sku_id", "a non-link button")
  }
  return out
}

/** Every button's fields, and custom ids unique within the message (components/reference, "Custom ID"). */
const componentProblems = (components: unknown, at: string): Array<string> => {
  const out: Array<string> = []
  const seen = new Set<string>()
  const walk = (c: unknown, path: string): void => {
    if (!isObject(c)) return
    if (c["type"] === 2) out.push(...buttonProblems(c, path))
    const id = c["custom_id"]
    if (typeof id === "string" && id !== "") {
      if (seen.has(id)) out.push(`${path}.custom_id: Component custom id cannot be duplicated (COMPONENT_CUSTOM_ID_DUPLICATED)`)
      seen.add(id)
    }
    list(c["components"]).forEach((child, i) => walk(child, `${path}.components[${i}]`))
    if (isObject(c["accessory"])) walk(c["accessory"], `${path}.accessory`)
    if (isObject(c["component"])) walk(c["component"], `${path}.component`)
  }
  list(components).forEach((c, i) => walk(c, `${at}.components[${i}]`))
  return out
}

/** Without IS_COMPONENTS_V2: at most 5 action rows, nothing else at the top; a row holds up to 5 buttons or one select. */
const legacyLayoutProblems = (components: unknown, at: string): Array<string> => {
  const out: Array<string> = []
  const top = list(components)
  if (top.length > 5) out.push(`${at}.components: Must be 5 or fewer in length. (BASE_TYPE_MAX_LENGTH)`)
  top.forEach((row, i) => {
    const path = `${at}.components[${i}]`
    if (!isObject(row) || row["type"] !== 1) {
      out.push(`${path}.type: only action rows (type 1) may be at the top level of a message without the IS_COMPONENTS_V2 flag (UNION_TYPE_CHOICES)`)
      return
    }
    let width = 0
    list(row["components"]).forEach((child, j) => {
      width += isObject(child) && SELECTS.has(child["type"] as number) ? 5 : 1
      if (width > 5) out.push(`${path}.components[${j}]: The specified component exceeds the maximum width (COMPONENT_LAYOUT_WIDTH_EXCEEDED)`)
    })
  })
  return out
}

const mentionProblems = (mentions: unknown, at: string): Array<string> => {
  if (!isObject(mentions)) return []
  const parse = list(mentions["parse"])
  // "Passing a falsy value such as null or an empty array into the users field does not trigger a validation error."
  return (["users", "roles"] as const).flatMap((kind) =>
    parse.includes(kind) && filled(mentions[kind])
      ? [`${at}.allowed_mentions: parse:["${kind}"] and ${kind}: [ids...] are mutually exclusive. (MESSAGE_ALLOWED_MENTIONS_PARSE_EXCLUSIVE)`]
      : []
  )
}

export interface RuleOptions {
  /** Where the message sits in the request body (`$.data` in an interaction's answer). */
  readonly at?: string
  /** The message already carries IS_COMPONENTS_V2 (an edit or an update cannot remove it). */
  readonly v2?: boolean
}

/** Every reason Discord would refuse `body` (the whole message, after an edit) sent on `route`; empty when accepted. */
export const messageProblems = (body: Body, route: MessageRoute, options: RuleOptions = {}): ReadonlyArray<string> => {
  const at = options.at ?? "$"
  const out: Array<string> = []
  const flags = typeof body["flags"] === "number" ? body["flags"] : 0
  const allowed = ALLOWED_FLAGS[route]
  if (allowed !== undefined && (flags & ~allowed) !== 0) {
    const names = FLAG_NAMES.filter(([bit]) => (allowed & bit) !== 0).map(([bit, name]) => `${name} (${bit})`).join(", ")
    out.push(`${at}.flags: only ${names} can be set here, got ${flags}`)
  }
  if (typeof body["content"] === "string" && [...body["content"]].length > 2000) out.push(`${at}.content: longer than 2000`)
  const embeds = list(body["embeds"])
  if (embeds.length > 10) out.push(`${at}.embeds: more than 10 items`)
  embeds.forEach((e, i) => {
    if (isObject(e) && list(e["fields"]).length > 25) out.push(`${at}.embeds[${i}].fields: more than 25 items`)
  })
  if (embedsLength(embeds) > 6000) out.push(`${at}.embeds: Embed size exceeds maximum size of 6000 (MAX_EMBED_SIZE_EXCEEDED)`)
  if ((flags & IS_COMPONENTS_V2) !== 0 || options.v2 === true) {
    for (const key of ["content", "embeds", "sticker_ids", "poll"]) {
      if (filled(body[key])) out.push(`${at}.${key}: a message with the IS_COMPONENTS_V2 flag can only contain components`)
    }
  } else {
    out.push(...legacyLayoutProblems(body["components"], at))
  }
  out.push(...componentProblems(body["components"], at))
  out.push(...mentionProblems(body["allowed_mentions"], at))
  return out
}

/** Nothing a member would see: no content, embeds, components, attachments, stickers or poll (50006). */
export const isEmptyMessage = (body: Body): boolean =>
  !["content", "embeds", "components", "attachments", "sticker_ids", "poll"].some((key) => filled(body[key]))
