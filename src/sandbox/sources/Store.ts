/**
 * What the source twins serve beyond their fixed seed: the events published through
 * `POST /sandbox/sources/:module/:identifier/events` (Publish.ts), kept per source in memory for one
 * build. Each twin reads its records from here and answers in its platform's own shape.
 */
import { Context, Effect, Layer } from "effect"
import { SandboxConfig } from "../DiscordConfig.ts"
import { ATOM_TITLE, RSS_TITLE } from "./Seed.ts"

/** The feed modules whose sources the sandbox plays. */
export type SandboxModule = "rss" | "forum" | "streaming" | "video" | "microblog" | "photo"
export const SANDBOX_MODULES: ReadonlyArray<SandboxModule> = ["rss", "forum", "streaming", "video", "microblog", "photo"]

export interface RssEntry {
  readonly id: string
  readonly title: string | null
  readonly link: string
  readonly publishedAt: number
  readonly text: string | null
  readonly author: string | null
  readonly categories: ReadonlyArray<string>
  readonly media: ReadonlyArray<string>
}

/** A feed served at `/sandbox/rss/<name>.xml`; its body and validators are rendered once per change. */
export interface RssFeed {
  readonly name: string
  readonly format: "rss" | "atom"
  readonly title: string
  readonly siteUrl: string
  readonly entries: Array<RssEntry>
  /** Time of the last change, whole seconds, strictly increasing (Last-Modified has 1 s resolution). */
  changedAt: number
  rendered: { readonly body: string; readonly etag: string; readonly lastModified: string } | undefined
}

export interface ForumPost {
  readonly id: string
  readonly title: string
  readonly text: string
  readonly author: string
  readonly flair: string | null
  readonly nsfw: boolean
  readonly createdAt: number
  /** Relative Reddit permalink, or the absolute URL the publisher gave. */
  readonly permalink: string
  /** A link post's target; null for a self post. */
  readonly link: string | null
}

export interface Stream {
  readonly id: string
  title: string
  gameId: string
  gameName: string
  mature: boolean
  readonly startedAt: number
}

export interface Video {
  readonly id: string
  title: string
  description: string
  readonly publishedAt: number
  readonly duration: string
  readonly ageRestricted: boolean
  readonly tags: ReadonlyArray<string>
}

export interface Tweet {
  readonly id: string
  readonly text: string
  readonly createdAt: number
  readonly media: ReadonlyArray<string>
  readonly replyTo: string | null
  readonly repostOf: string | null
}

export interface IgMedia {
  readonly id: string
  readonly caption: string | null
  readonly media: ReadonlyArray<string>
  readonly permalink: string
  readonly timestamp: number
}

const seedFeeds = (): Array<RssFeed> => [
  {
    name: "news",
    format: "rss",
    title: RSS_TITLE,
    siteUrl: "https://example.com/sandbox",
    entries: [
      {
        id: "sandbox-rss-2",
        title: "Second item",
        link: "https://example.com/sandbox/second",
        publishedAt: Date.parse("2025-01-07T10:00:00Z"),
        text: null,
        author: null,
        categories: [],
        media: []
      },
      {
        id: "sandbox-rss-1",
        title: "Welcome to the sandbox",
        link: "https://example.com/sandbox/welcome",
        publishedAt: Date.parse("2025-01-06T10:00:00Z"),
        text: "<p>First <b>item</b> of the feed.</p>",
        author: null,
        categories: [],
        media: []
      }
    ],
    changedAt: Date.parse("2025-01-07T10:00:00Z"),
    rendered: undefined
  },
  {
    name: "atom",
    format: "atom",
    title: ATOM_TITLE,
    siteUrl: "https://example.com/sandbox/atom",
    entries: [{
      id: "urn:uuid:00000000-0000-4000-8000-000000000a71",
      title: "Atom entry one",
      link: "https://example.com/sandbox/atom/1",
      publishedAt: Date.parse("2025-01-07T10:00:00Z"),
      text: "The first entry.",
      author: null,
      categories: [],
      media: []
    }],
    changedAt: Date.parse("2025-01-07T10:00:00Z"),
    rendered: undefined
  }
]

export class SourceStore {
  /** By short name (`news`, `atom`, or a feed created by publishing to a new name). */
  readonly feeds = new Map<string, RssFeed>(seedFeeds().map((f) => [f.name, f]))
  /** By lower-case subreddit name; newest last. */
  readonly posts = new Map<string, Array<ForumPost>>()
  /** By Twitch user id: the stream on air, if any. */
  readonly streams = new Map<string, Stream>()
  /** Every stream id ever started, so ids stay unique. */
  readonly streamIds = new Set<string>()
  /** By YouTube channel id; newest last. */
  readonly videos = new Map<string, Array<Video>>()
  /** By X user id; newest last. */
  readonly tweets = new Map<string, Array<Tweet>>()
  /** By Instagram user id; newest last. */
  readonly media = new Map<string, Array<IgMedia>>()
  private sequence = 0

  /** PUBLIC_URL in sandbox mode (feed URLs are listed under it); undefined when served alone. */
  constructor(readonly publicOrigin: string | undefined) {}

  /** A fresh number for generated ids. */
  next(): number {
    this.sequence += 1
    return this.sequence
  }

  /** Marks a feed changed at `now`: a new Last-Modified (strictly later than the last one), a new body. */
  touch(feed: RssFeed, now: number): void {
    feed.changedAt = Math.max(Math.floor(now / 1000) * 1000, feed.changedAt + 1000)
    feed.rendered = undefined
  }

  listOf<A>(map: Map<string, Array<A>>, key: string): Array<A> {
    let list = map.get(key)
    if (list === undefined) {
      list = []
      map.set(key, list)
    }
    return list
  }
}

/** The published events of one build (shared by the twins and the publish route). */
export class SourceState extends Context.Service<SourceState, SourceStore>()("gateway/SandboxSourceState") {
  static readonly layer = Layer.effect(
    SourceState,
    Effect.gen(function*() {
      return new SourceStore((yield* SandboxConfig).publicOrigin)
    })
  )
}
