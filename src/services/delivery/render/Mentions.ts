/**
 * The mentions rule (delivery.md §10): a feed's `mention_roles` open its message (`<@&id> …` and a
 * newline) and are the only mentions that may ping: `allowed_mentions` is `{ parse: [] }` without
 * them and `{ parse: [], roles: [exactly them] }` with them, so `@everyone`, `@here`, `<@user>` and
 * `<@&otherRole>` in a source's text or in a header stay text.
 */

export interface AllowedMentions {
  readonly parse: readonly []
  readonly roles?: ReadonlyArray<string>
}

/** The feed's roles, each once, in its order; none for null or an empty list. */
export const mentionRoles = (roles: ReadonlyArray<string> | null | undefined): ReadonlyArray<string> =>
  [...new Set(roles ?? [])]

/** `allowed_mentions` for these roles. */
export const allowedMentions = (roles: ReadonlyArray<string>): AllowedMentions =>
  roles.length === 0 ? { parse: [] } : { parse: [], roles: [...roles] }

/** What opens the content: the roles' mentions and a newline, or nothing. */
export const mentionPrefix = (roles: ReadonlyArray<string>): string =>
  roles.length === 0 ? "" : `${roles.map((id) => `<@&${id}>`).join(" ")}\n`
