/**
 * The external-source sandbox's fixed data: streaming users and games, video channels, microblog
 * and photo users, forums with flairs, the feeds it serves, and the task-board team's boards. Ids
 * are fixed so tests and demos can name them; every value has the shape of the real API's.
 */
import { S1_TASKBOARD_TEAM } from "../seed/Ids.ts"

export interface StreamingUser { readonly id: string; readonly login: string; readonly displayName: string }
export interface Game { readonly id: string; readonly name: string }
export interface VideoChannel { readonly id: string; readonly title: string; readonly customUrl?: string }
export interface MicroblogUser { readonly id: string; readonly username: string; readonly name: string }
export interface PhotoUser { readonly id: string; readonly username: string; readonly name?: string }
export interface Forum { readonly name: string; readonly title: string; readonly flairs: ReadonlyArray<string>; readonly private?: boolean }
export interface TrelloBoard { readonly id: string; readonly name: string; readonly closed: boolean }

export const STREAMING_USERS: ReadonlyArray<StreamingUser> = [
  { id: "41000001", login: "sandboxstreamer", displayName: "SandboxStreamer" },
  { id: "41000002", login: "pixelpainter", displayName: "PixelPainter" },
  { id: "41000003", login: "speedrunsam", displayName: "SpeedrunSam" }
]

export const GAMES: ReadonlyArray<Game> = [
  { id: "27471", name: "Minecraft" },
  { id: "509658", name: "Just Chatting" },
  { id: "33214", name: "Fortnite" },
  { id: "509660", name: "Art" }
]

/** Channel 1 and 3 have a custom URL alias; channel 2 has none (its userName is its id). */
export const VIDEO_CHANNELS: ReadonlyArray<VideoChannel> = [
  { id: "UCsandbox000000000000001", title: "Sandbox Channel", customUrl: "@sandboxchannel" },
  { id: "UCsandbox000000000000002", title: "Sandbox Cooking" },
  { id: "UCsandbox000000000000003", title: "Sandbox Music", customUrl: "@sandboxmusic" }
]

export const MICROBLOG_USERS: ReadonlyArray<MicroblogUser> = [
  { id: "1500000000000000001", username: "sandboxbird", name: "Sandbox Bird" },
  { id: "1500000000000000002", username: "gatewaynews", name: "Gateway News" }
]

/** Instagram professional accounts (business discovery finds only these); the second has no name. */
export const PHOTO_USERS: ReadonlyArray<PhotoUser> = [
  { id: "17841400000000101", username: "sandboxphotos", name: "Sandbox Photos" },
  { id: "17841400000000102", username: "sandbox.travel" }
]

/** `SandboxPrivate` exists but is private: Reddit answers 403, the gateway "not found". */
export const FORUMS: ReadonlyArray<Forum> = [
  { name: "SandboxGaming", title: "Sandbox Gaming", flairs: ["Discussion", "News", "Meme"] },
  { name: "SandboxNews", title: "Sandbox News", flairs: ["World", "Tech"] },
  { name: "SandboxNoFlair", title: "No flairs here", flairs: [] },
  { name: "SandboxPrivate", title: "Private", flairs: ["Secret"], private: true }
]

export const RSS_PATHS = {
  rss: "/sandbox/rss/news.xml",
  atom: "/sandbox/rss/atom.xml",
  notAFeed: "/sandbox/rss/not-a-feed.html"
} as const
export const RSS_TITLE = "Sandbox News & Updates"
export const ATOM_TITLE = "Sandbox Atom Feed"

/** The task-board team S1 is paired with, and its boards (the closed one is never listed). */
export const TASKBOARD_TEAM = S1_TASKBOARD_TEAM
export const TASKBOARD_BOARDS: ReadonlyArray<TrelloBoard> = [
  { id: "5f1a0000000000000000b001", name: "Sandbox Roadmap", closed: false },
  { id: "5f1a0000000000000000b002", name: "Sandbox Applications", closed: false },
  { id: "5f1a0000000000000000b003", name: "Archived Board", closed: true }
]

/**
 * What `GET /sandbox` lists under "sources". RSS entries are paths relative to the gateway's
 * PUBLIC_URL (see `sourcesListing` for absolute URLs); `/sandbox/rss/not-a-feed.html` is served too,
 * for the "not a feed" case.
 */
export const SOURCES_LISTING = {
  photo: PHOTO_USERS.map((u) => u.username),
  forum: FORUMS.filter((f) => f.private !== true).map((f) => f.name),
  rss: [RSS_PATHS.rss, RSS_PATHS.atom],
  streaming: STREAMING_USERS.map((u) => u.login),
  microblog: MICROBLOG_USERS.map((u) => u.username),
  video: VIDEO_CHANNELS.map((c) => c.id),
  games: GAMES.map((g) => g.name)
}

/** The listing with absolute feed URLs for a gateway at `publicUrl`. */
export const sourcesListing = (publicUrl: string) => ({
  ...SOURCES_LISTING,
  rss: SOURCES_LISTING.rss.map((path) => `${publicUrl.replace(/\/+$/, "")}${path}`)
})
