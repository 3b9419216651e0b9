/**
 * What the feed screens share (gateway-api.md "Feeds", delivery.md §5): the six modules, one
 * module's routes through the typed client, the feed's name and status in words.
 */
import { h } from "preact"
import type { Effect } from "effect"
import { BotId, FeedId, ServerId } from "../../http/client.ts"
import type { Client, Feed, FeedModuleName, FeedStatus, GameLookup, Server, UserLookup } from "../../http/client.ts"
import type { DeliveryLogPage, FeedPreview, TestMessageResult } from "../../http/client.ts"

export const FEED_MODULES: ReadonlyArray<FeedModuleName> = ["photo", "forum", "rss", "streaming", "microblog", "video"]
export const isFeedModule = (m: string): m is FeedModuleName => FEED_MODULES.some((f) => f === m)

export const MODULE_LABEL: Record<FeedModuleName, string> = {
  photo: "Photo",
  forum: "Forum",
  rss: "RSS",
  streaming: "Streaming",
  microblog: "Microblog",
  video: "Video"
}

type P = { readonly appClientId: BotId; readonly serverId: ServerId }
type FP = P & { readonly feedId: FeedId }
type Call<I, A> = (request: I) => Effect.Effect<A, unknown>

/** One module's routes through the typed client, seen without the module in their types. */
interface FeedsGroup {
  readonly list: Call<{ readonly params: P }, { readonly feeds: ReadonlyArray<Feed> }>
  readonly create: Call<{ readonly params: P; readonly payload: unknown }, Feed>
  readonly update: Call<{ readonly params: FP; readonly payload: unknown }, Feed>
  readonly delete: Call<{ readonly params: FP }, unknown>
  readonly status: Call<{ readonly params: FP }, FeedStatus>
  readonly preview: Call<{ readonly params: FP }, FeedPreview>
  readonly test: Call<{ readonly params: FP }, TestMessageResult>
  readonly refresh: Call<{ readonly params: FP }, unknown>
  readonly deliveries: Call<{ readonly params: FP; readonly query: { readonly page?: string; readonly page_size?: string } }, DeliveryLogPage>
  readonly getUserId?: Call<{ readonly params: P & { readonly userName: string } }, UserLookup>
  readonly getGameId?: Call<{ readonly params: P & { readonly gameName: string } }, GameLookup>
}
// The cast: every module's group has these routes with these shapes (http/contract/FeedsApi.ts builds them
// from one function); only their module-specific option types differ, which the editor handles.
export const group = (c: Client, m: FeedModuleName) => c[m] as unknown as FeedsGroup

export const paramsOf = (bot: string, server: string): P => ({ appClientId: BotId.make(bot), serverId: ServerId.make(server) })
export const feedParams = (bot: string, server: string, feed: string): FP => ({ ...paramsOf(bot, server), feedId: FeedId.make(feed) })
export const serverBase = (bot: string, server: string) => `/app/bots/${bot}/servers/${server}`
export const crumbsOf = (bot: string, server: string, name: string) => [
  { label: "Bots", href: "/app" },
  { label: "Servers", href: `/app/bots/${bot}` },
  { label: name, href: serverBase(bot, server) }
]

export const feedName = (f: Feed) => {
  const d = (f as { readonly display_info?: { readonly display_name: string; readonly user_name: string } }).display_info
  return d === undefined ? f.feed_identifier : `${d.display_name} (${d.user_name})`
}

export const channelName = (server: Server, id: string) => {
  const c = server.channels.find((ch) => ch.id === id)
  return c === undefined ? `channel ${id}` : `#${c.name}`
}

const STATE_LABEL = { active: "Active", failing: "Failing", disabled: "Disabled" } as const

/** The feed's state in a word, and why when it is failing or disabled. */
export const StatusBadge = (props: { readonly status: FeedStatus | undefined }) =>
  props.status === undefined
    ? h("span", { class: "muted" }, "Status unknown")
    : h("span", { class: "status-cell" },
      h("span", { class: `badge ${props.status.state}` }, STATE_LABEL[props.status.state]),
      props.status.reason === null ? null : h("span", { class: "why" }, props.status.reason))

/** A line carried to the next screen ("Created the feed …"), shown once by the screen that takes it. */
let carried = ""
export const carry = (said: string) => {
  carried = said
}
export const takeCarried = () => {
  const said = carried
  carried = ""
  return said
}
