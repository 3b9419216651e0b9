/**
 * The words and values a message view shows that the message does not spell out: a role's name, a
 * forum post's tag names, who the message pings, the embed's colour. Pure.
 */
import type { PreviewItem, Role } from "../../http/client.ts"

export type Message = PreviewItem["message"]

export const isHttp = (url: string | null | undefined): url is string => typeof url === "string" && /^https?:\/\/\S+$/i.test(url)

/** The role's name without a leading "@" (the server's @everyone role is named with it); the platform's word for one it lacks. */
export const roleName = (roles: ReadonlyArray<Role>, id: string) => {
  const role = roles.find((r) => r.id === id)
  return role === undefined ? "unknown-role" : role.name.replace(/^@/, "")
}

/**
 * A forum post's tags by name. `applied_tags` are the ids of the forum's tags named in the feed's
 * `forum_tags` (unknown names left out); the panel cannot list a forum's tags, so the names are
 * certain only when every name was applied. Otherwise: how many, of which names.
 */
export const tagNames = (applied: ReadonlyArray<string>, forumTags: ReadonlyArray<string> | null): ReadonlyArray<string> => {
  const byKey = new Map<string, string>()
  for (const n of forumTags ?? []) if (!byKey.has(n.trim().toLowerCase())) byKey.set(n.trim().toLowerCase(), n.trim())
  const names = [...byKey.values()]
  if (applied.length === names.length) return names
  return [`${applied.length} ${applied.length === 1 ? "tag" : "tags"} of: ${names.join(", ") || "none named"}`]
}

/** Who the message pings, in words (allowed_mentions: no one but the feed's roles). */
export const pingsOf = (m: Message, roles: ReadonlyArray<Role>) => {
  const named = (m.allowed_mentions.roles ?? []).map((id) => `@${roleName(roles, id)}`)
  const parsed = m.allowed_mentions.parse.map((p) => (p === "everyone" ? "@everyone and @here" : `every mentioned ${p.replace(/s$/, "")}`))
  const all = [...named, ...parsed]
  return all.length === 0
    ? "Pings no one: mentions in the text are shown, but notify nobody."
    : `Pings ${all.join(", ")}; other mentions in the text notify nobody.`
}

/** An embed's `color` as `#rrggbb`; undefined when absent or not a colour. */
export const barColour = (color: number | undefined) =>
  color === undefined || !Number.isInteger(color) || color < 0 || color > 0xffffff ? undefined : `#${color.toString(16).padStart(6, "0")}`
