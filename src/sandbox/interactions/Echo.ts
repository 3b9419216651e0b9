/**
 * Embeds and components as the platform echoes what a bot sent: in its own module (no imports) so the
 * older webhook shapes (DiscordShapes.ts) use the same rules as the interaction messages.
 */
type Body = Readonly<Record<string, unknown>>

const isObject = (u: unknown): u is Body => typeof u === "object" && u !== null && !Array.isArray(u)
const list = (u: unknown): ReadonlyArray<unknown> => (Array.isArray(u) ? u : [])

/** Components as Discord echoes them: every component numbered (`id`, depth first; a Label's child too), select defaults filled. */
export const componentsOut = (components: unknown, numberOnly = false): Array<unknown> => {
  let next = 0
  const used = new Set<number>()
  const collect = (c: unknown): void => {
    if (!isObject(c)) return
    if (typeof c["id"] === "number" && c["id"] > 0) used.add(c["id"])
    for (const child of list(c["components"])) collect(child)
    if (isObject(c["accessory"])) collect(c["accessory"])
    if (isObject(c["component"])) collect(c["component"])
  }
  const number = (): number => {
    do next += 1
    while (used.has(next))
    return next
  }
  const out = (c: unknown): unknown => {
    if (!isObject(c)) return c
    const id = typeof c["id"] === "number" && c["id"] > 0 ? c["id"] : number()
    const base: Record<string, unknown> = { ...c, id }
    if (Array.isArray(c["components"])) base["components"] = c["components"].map(out)
    if (isObject(c["accessory"])) base["accessory"] = out(c["accessory"])
    if (isObject(c["component"])) base["component"] = out(c["component"])
    if (numberOnly) return base
    switch (c["type"]) {
      case 3:
        delete base["required"]
        return { ...base, min_values: c["min_values"] ?? 1, max_values: c["max_values"] ?? 1 }
      case 17:
        return { ...base, accent_color: c["accent_color"] ?? null, spoiler: c["spoiler"] ?? false }
      default:
        return base
    }
  }
  const all = list(components)
  all.forEach(collect)
  return all.map(out)
}

/** Embeds as Discord echoes them: `type: "rich"`, fields with `inline`. */
export const embedsOut = (embeds: unknown): Array<unknown> =>
  list(embeds).map((e) => {
    if (!isObject(e)) return e
    const fields = Array.isArray(e["fields"])
      ? { fields: e["fields"].map((f) => (isObject(f) ? { ...f, inline: f["inline"] === true } : f)) }
      : {}
    return { ...e, type: "rich", ...fields }
  })

