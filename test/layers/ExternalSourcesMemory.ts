/**
 * The external sources in memory, over the sandbox twins' seed: the same users, games, channels,
 * forums and feeds, found by the same inputs (case, `@`, `r/`, ids, handles, titles) as the live
 * clients find them through the twins, with no HTTP. Feeds live under `origin` (default
 * `MEMORY_ORIGIN`) at the twins' paths. Held to the live clients' suite:
 * test/contracts/ExternalSources.contract.ts.
 */
import { Effect, Layer } from "effect"
import { BadRequest, NotFound } from "../../src/domain/infra/Errors.ts"
import type { Forum, Game, MicroblogUser, PhotoUser, StreamingUser, VideoChannel } from "../../src/sandbox/sources/Seed.ts"
import * as SourcesSeed from "../../src/sandbox/sources/Seed.ts"
import type { ExternalUser } from "../../src/services/sources/ExternalSources.ts"
import { ExternalSources } from "../../src/services/sources/ExternalSources.ts"

export interface ExternalSourcesSeed {
  readonly streamingUsers: ReadonlyArray<StreamingUser>
  readonly games: ReadonlyArray<Game>
  readonly videoChannels: ReadonlyArray<VideoChannel>
  readonly microblogUsers: ReadonlyArray<MicroblogUser>
  readonly photoUsers: ReadonlyArray<PhotoUser>
  readonly forums: ReadonlyArray<Forum>
  /** Absolute feed URL → its title. */
  readonly feeds: ReadonlyMap<string, string>
  /** Absolute URLs that answer, but with something that is not a feed. */
  readonly notFeeds: ReadonlyArray<string>
}

export const MEMORY_ORIGIN = "http://sources.memory"

/** The twins' seed, with the feeds under `origin`. */
export const sandboxSourcesSeed = (origin = MEMORY_ORIGIN): ExternalSourcesSeed => ({
  streamingUsers: SourcesSeed.STREAMING_USERS,
  games: SourcesSeed.GAMES,
  videoChannels: SourcesSeed.VIDEO_CHANNELS,
  microblogUsers: SourcesSeed.MICROBLOG_USERS,
  photoUsers: SourcesSeed.PHOTO_USERS,
  forums: SourcesSeed.FORUMS,
  feeds: new Map([
    [`${origin}${SourcesSeed.RSS_PATHS.rss}`, SourcesSeed.RSS_TITLE],
    [`${origin}${SourcesSeed.RSS_PATHS.atom}`, SourcesSeed.ATOM_TITLE]
  ]),
  notFeeds: [`${origin}${SourcesSeed.RSS_PATHS.notAFeed}`]
})

// The inputs each live client accepts before it asks its upstream (src/layers/sources).
const NUMERIC = /^\d{1,20}$/
const STREAMING_LOGIN = /^[a-zA-Z0-9_]{1,25}$/
const VIDEO_CHANNEL_ID = /^UC[A-Za-z0-9_-]{22}$/
const VIDEO_HANDLE = /^@[\p{L}\p{N}._-]{3,30}$/u
const MICROBLOG_NAME = /^[A-Za-z0-9_]{1,15}$/
const PHOTO_NAME = /^[A-Za-z0-9._]{1,30}$/
const SUBREDDIT = /^[A-Za-z0-9][A-Za-z0-9_]{1,20}$/

const found = <A>(value: A | undefined, notFound: () => NotFound) =>
  value === undefined ? Effect.fail(notFound()) : Effect.succeed(value)

export const makeExternalSourcesMemory = (seed: ExternalSourcesSeed) => {
  const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase()

  const streaming = (input: string) => {
    const user = NUMERIC.test(input) || STREAMING_LOGIN.test(input)
      ? seed.streamingUsers.find((u) => u.id === input) ?? seed.streamingUsers.find((u) => same(u.login, input))
      : undefined
    return user && { id: user.id, userName: user.login, displayName: user.displayName, url: `https://www.twitch.tv/${user.login}` }
  }

  const video = (input: string) => {
    const channel = VIDEO_CHANNEL_ID.test(input)
      ? seed.videoChannels.find((c) => c.id === input)
      : VIDEO_HANDLE.test(input)
      ? seed.videoChannels.find((c) => c.customUrl !== undefined && same(c.customUrl, input))
      // A title search: the exact title wins, else the first channel whose title contains it.
      : seed.videoChannels.find((c) => same(c.title, input)) ??
        seed.videoChannels.find((c) => c.title.toLowerCase().includes(input.toLowerCase()))
    if (channel === undefined) return undefined
    const alias = channel.customUrl !== undefined && channel.customUrl.length > 0 ? channel.customUrl : undefined
    return {
      id: channel.id,
      userName: alias ?? channel.id,
      displayName: channel.title,
      url: alias?.startsWith("@") ? `https://www.youtube.com/${alias}` : `https://www.youtube.com/channel/${channel.id}`
    }
  }

  const microblog = (input: string) => {
    const user = (NUMERIC.test(input) ? seed.microblogUsers.find((u) => u.id === input) : undefined) ??
      (MICROBLOG_NAME.test(input) ? seed.microblogUsers.find((u) => same(u.username, input)) : undefined)
    return user && { id: user.id, userName: user.username, displayName: user.name, url: `https://x.com/${user.username}` }
  }

  const photo = (input: string) => {
    const user = (NUMERIC.test(input) ? seed.photoUsers.find((u) => u.id === input) : undefined) ??
      (PHOTO_NAME.test(input) ? seed.photoUsers.find((u) => u.username === input.toLowerCase()) : undefined)
    return user && {
      id: user.id,
      userName: user.username,
      displayName: user.name !== undefined && user.name.length > 0 ? user.name : user.username,
      url: `https://www.instagram.com/${user.username}/`
    }
  }

  return ExternalSources.of({
    lookupUser: (module, nameOrId) => {
      const trimmed = nameOrId.trim()
      const bare = trimmed.replace(/^@/, "")
      const user: ExternalUser | undefined = module === "streaming"
        ? streaming(bare)
        : module === "video"
        ? (trimmed === "" ? undefined : video(trimmed))
        : module === "microblog"
        ? microblog(bare)
        : photo(bare)
      return found(user, () => NotFound.of(`No ${module} user "${nameOrId}".`))
    },
    lookupGame: (nameOrId) => {
      const input = nameOrId.trim()
      const game = input === "" ? undefined : seed.games.find((g) => g.id === input) ?? seed.games.find((g) => same(g.name, input))
      return found(game && { id: game.id, name: game.name }, () => NotFound.of(`No game "${nameOrId}".`))
    },
    gameNames: (ids) => Effect.succeed(ids.flatMap((id) => seed.games.filter((g) => g.id === id).map((g) => g.name))),
    forum: (input) => {
      const name = input.trim().replace(/^\/?r\//i, "").replace(/\/+$/, "")
      const forum = SUBREDDIT.test(name) ? seed.forums.find((f) => same(f.name, name) && f.private !== true) : undefined
      return found(forum && { name: forum.name, flairs: [...new Set(forum.flairs.filter((f) => f.length > 0))] }, () =>
        NotFound.of(`No forum "${input}".`))
    },
    rss: (input) => {
      const shown = input.trim()
      if (!URL.canParse(shown)) return Effect.fail(BadRequest.of(`${shown} is not a URL.`))
      const url = new URL(shown)
      if (url.protocol !== "http:" && url.protocol !== "https:") {
        return Effect.fail(BadRequest.of(`${shown} is not an http or https URL.`))
      }
      const title = seed.feeds.get(url.href)
      if (title !== undefined) return Effect.succeed({ url: url.href, title })
      if (seed.notFeeds.includes(url.href)) return Effect.fail(BadRequest.of(`${shown} is not an RSS or Atom feed.`))
      return Effect.fail(NotFound.of(`${shown} does not exist (404).`))
    }
  })
}

/** The memory sources over `seed`. */
export const externalSourcesMemory = (seed: ExternalSourcesSeed): Layer.Layer<ExternalSources> =>
  Layer.succeed(ExternalSources, makeExternalSourcesMemory(seed))

/** Over the twins' seed, feeds under `MEMORY_ORIGIN`. */
export const ExternalSourcesMemory = externalSourcesMemory(sandboxSourcesSeed())
