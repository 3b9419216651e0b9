/**
 * delivery.md §10's message, exact bodies over the pure renderer: mentions × embed × split over
 * every module; the embed's fields per module and its limits; splitting at line, then word
 * boundaries, up to 3; forum posts' name and tags; hostile text that must ping no one.
 */
import { describe, expect, it } from "vitest"
import { colorOf, embedLength, EMBED_TOTAL } from "../../src/services/delivery/render/Embed.ts"
import { appliedTags, threadName } from "../../src/services/delivery/render/ForumPost.ts"
import type { Item } from "../../src/services/delivery/render/Item.ts"
import { allowedMentions, mentionPrefix, mentionRoles } from "../../src/services/delivery/render/Mentions.ts"
import type { DeliveryOptions } from "../../src/services/delivery/render/Options.ts"
import { readOptions } from "../../src/services/delivery/render/Options.ts"
import { MAX_CONTENT, outgoing, render, renderMessages } from "../../src/services/delivery/render/Render.ts"
import { splitText } from "../../src/services/delivery/render/Split.ts"
import { codePointLength } from "../../src/services/delivery/render/Text.ts"
import { AT, forum, microblog, photo, rss, streaming, video } from "./ItemFixtures.ts"

const R1 = "320000000000000101"
const R2 = "320000000000000102"
const ITEMS: ReadonlyArray<readonly [string, Item]> = [
  ["rss", rss()],
  ["forum", forum()],
  ["streaming", streaming()],
  ["microblog", microblog()],
  ["video", video()],
  ["photo", photo()]
]

describe("mentions × embed × split, every module", () => {
  for (const [module, item] of ITEMS) {
    for (const roles of [null, [], [R1, R2]] as const) {
      for (const embed of [false, true]) {
        for (const split of [false, true]) {
          it(`${module}: mention_roles ${JSON.stringify(roles)}, embed ${embed}, split ${split}`, () => {
            const options: DeliveryOptions = { mention_roles: roles, embed, split }
            const plain = render(item, {})
            const messages = renderMessages(item, options)
            expect(messages).toHaveLength(1)
            const m = messages[0]!
            const mentioned = roles !== null && roles.length > 0
            expect(m.allowed_mentions).toEqual(mentioned ? { parse: [], roles: [R1, R2] } : { parse: [] })
            const prefix = mentioned ? `<@&${R1}> <@&${R2}>\n` : ""
            // With an embed the content keeps the header only: the URL is the embed's title link.
            const header = plain.content.slice(0, plain.content.lastIndexOf("\n"))
            expect(m.content).toBe(prefix + (embed ? header : plain.content))
            expect(m.username).toBe(plain.username)
            expect(m.avatar_url).toBe(plain.avatar_url)
            if (embed) {
              expect(m.embeds).toHaveLength(1)
              expect(m.embeds![0]!.url).toBe(item.url)
              expect(m.embeds![0]!.timestamp).toBe(AT.toISOString())
            } else expect(m.embeds).toBeUndefined()
            expect(m.thread_name).toBeUndefined()
          })
        }
      }
    }
  }
})

describe("the embed per module", () => {
  it.each([
    ["rss", rss({ mediaUrl: "https://news.test/a.jpg" }), {
      title: "Hello world", description: "Body **bold**", image: { url: "https://news.test/a.jpg" },
      thumbnail: { url: "https://news.test/logo.png" }, author: { name: "Ann" }, footer: { text: "News Site" }
    }],
    ["forum", forum(), {
      title: "Hello world", thumbnail: { url: "https://img.test/ts.png" }, author: { name: "u/bob" }, footer: { text: "/r/typescript" }
    }],
    ["forum, a text post: its self-text", forum({ selfText: "Why **this**?" }), {
      title: "Hello world", description: "Why **this**?", thumbnail: { url: "https://img.test/ts.png" }, author: { name: "u/bob" },
      footer: { text: "/r/typescript" }
    }],
    ["streaming", streaming(), {
      title: "Caster is live", description: "Blitz night", thumbnail: { url: "https://img.test/caster.png" },
      author: { name: "Caster" }, footer: { text: "Caster" }
    }],
    ["microblog", microblog({ mediaUrls: ["https://img.test/m1.jpg", "https://img.test/m2.jpg"] }), {
      title: "Jane Doe (@jdoe)", description: "Hello world", image: { url: "https://img.test/m1.jpg" },
      thumbnail: { url: "https://img.test/jdoe.png" }, author: { name: "Jane Doe" }, footer: { text: "jdoe" }
    }],
    ["video", video(), {
      title: "Hello world", description: "A song.", image: { url: "https://i.ytimg.test/vi/dQw4w9WgXcQ/hq.jpg" },
      thumbnail: { url: "https://img.test/chan.png" }, author: { name: "Chan" }, footer: { text: "Chan" }
    }],
    ["photo", photo(), {
      title: "Pat Smith", description: "Hello world", image: { url: "https://cdn.test/p.jpg" },
      thumbnail: { url: "https://img.test/pat.png" }, author: { name: "Pat Smith" }, footer: { text: "pat" }
    }]
  ] as const)("%s", (_, item, fields) => {
    const m = render(item, { embed: true, embed_color: "#00ff7F" })
    expect(m.embeds).toEqual([{ ...fields, url: item.url, color: 0x00ff7f, timestamp: AT.toISOString() }])
  })

  it("within the platform's limits: title 256, description cut so that the whole stays within 6,000", () => {
    const long = rss({ title: "T".repeat(400), contentHtml: `<p>${"word ".repeat(3000)}</p>`, author: "A".repeat(300), feedTitle: "F".repeat(2100) })
    const e = render(long, { embed: true }).embeds![0]!
    expect(codePointLength(e.title!)).toBe(256)
    expect(codePointLength(e.author!.name)).toBe(256)
    expect(codePointLength(e.footer!.text)).toBe(2048)
    expect(embedLength(e)).toBe(EMBED_TOTAL)
    expect(e.description!.endsWith("…")).toBe(true)
    const short = render(rss({ contentHtml: `<p>${"x".repeat(5000)}</p>` }), { embed: true }).embeds![0]!
    expect(codePointLength(short.description!)).toBe(4096)
  })

  it("no colour without embed_color; an NSFW item censored shows no image and wraps its URLs", () => {
    expect(render(rss(), { embed: true }).embeds![0]!.color).toBeUndefined()
    const nsfw = rss({ title: "porn", contentHtml: "<p>see https://x.test/a</p>", mediaUrl: "https://x.test/i.jpg" })
    const e = render(nsfw, { embed: true, nsfw: "censor" }).embeds![0]!
    expect(e.image).toBeUndefined()
    expect(e.thumbnail).toBeUndefined()
    expect(e.description).toBe("see <https://x.test/a>")
  })
})

describe("the embed's edges", () => {
  const embedOf = (item: Item) => render(item, { embed: true }).embeds![0]!
  it("absent, blank or unusable parts are left out; present ones trimmed", () => {
    const bare = rss({ title: null, author: "  ", contentHtml: null, mediaUrl: "ftp://x.test/a.jpg", feedImage: "javascript:alert(1)", feedTitle: null })
    expect(embedOf(bare)).toEqual({ timestamp: AT.toISOString() })
    expect(embedLength(embedOf(bare))).toBe(0)
    const padded = embedOf(rss({ title: "  Hi  ", author: "  Ann  ", feedTitle: "  Site  ", mediaUrl: "http://x.test/a.jpg" }))
    expect([padded.title, padded.author, padded.footer, padded.image]).toEqual(["Hi", { name: "Ann" }, { text: "Site" }, { url: "http://x.test/a.jpg" }])
    // A title without a usable URL is not linked.
    expect(embedOf(rss({ url: "not a url" })).url).toBeUndefined()
    expect(embedOf(streaming({ event: "offline" })).title).toBe("Caster is offline")
    expect(embedOf(video({ description: "  " })).description).toBeUndefined()
    expect(embedOf(video({ description: "  A song.  " })).description).toBe("A song.")
  })

  it("URLs: http(s) only, whole, at most 2,048 characters", () => {
    const image = (mediaUrl: string) => embedOf(rss({ mediaUrl })).image
    const at = (n: number) => `https://x.test/${"a".repeat(n - 15)}`
    expect(image(at(2048))).toEqual({ url: at(2048) })
    expect(image(at(2049))).toBeUndefined()
    expect(image("see https://x.test/a.jpg")).toBeUndefined()
    expect(image("https://x.test/a b.jpg")).toBeUndefined()
  })

  it("the colour: exactly #rrggbb", () => {
    expect(colorOf("#00ff7F")).toBe(0x00ff7f)
    expect(colorOf("x#00ff7f")).toBeNull()
    expect(colorOf("#00ff7fff")).toBeNull()
    expect(colorOf(null)).toBeNull()
  })

  it("forum posts: the name on one line; tags trimmed, case-insensitive, at most 5", () => {
    expect(threadName("a \n  b", "fallback")).toBe("a b")
    const tags = ["One", " Two ", "Three", "Four", "Five", "Six"].map((name, i) => ({ id: String(i + 1), name }))
    expect(appliedTags(tags, [" two ", "one"])).toEqual(["1", "2"])
    expect(appliedTags(tags, tags.map((t) => t.name))).toEqual(["1", "2", "3", "4", "5"])
    expect(appliedTags(tags, null)).toEqual([])
  })
})

describe("split", () => {
  it("cuts at line, then word boundaries, then characters; at most 3 pieces", () => {
    expect(splitText("aaaa\nbb cc", 7, 3)).toEqual(["aaaa", "bb cc"])
    expect(splitText("aa bb cc", 5, 3)).toEqual(["aa bb", "cc"])
    expect(splitText("abcdefgh", 3, 3)).toEqual(["abc", "def", "gh"])
    expect(splitText("abcdefghijkl", 3, 3)).toEqual(["abc", "def", "ghijkl"])
    expect(splitText("short", 10, 3)).toEqual(["short"])
    expect(splitText("ab cd", 5, 3, 2)).toEqual(["ab", "cd"])
  })

  it.each([
    ["the first piece has its own limit", "aaa bbb ccc", 7, 3, 3, ["aaa", "bbb ccc"]],
    ["no room at all: nothing is cut", "abc", 5, 3, 0, ["abc"]],
    ["a limit of 1", "abcd", 1, 3, 1, ["a", "b", "cd"]],
    ["exactly at the limit: one piece", "abc", 3, 3, 3, ["abc"]],
    ["the last space before the limit", "aa bb", 4, 3, 4, ["aa", "bb"]],
    ["a line break right after the head beats an earlier space", "aa bb\ncc", 5, 3, 5, ["aa bb", "cc"]],
    ["a line break at the very start is no boundary", "\nab cd", 4, 3, 4, ["\nab", "cd"]],
    ["a space inside the head beats a hard cut", "aa bbcc", 4, 3, 4, ["aa", "bbcc"]],
    ["a space at the very start is no boundary", " abcdef", 4, 2, 4, [" abc", "def"]],
    ["a word cut before the limit", "ab cdef", 4, 2, 4, ["ab", "cdef"]],
    ["white space at a cut is dropped on both sides", "ab   cd", 4, 2, 4, ["ab", "cd"]],
    ["an empty piece is never sent", "   abcdef", 3, 3, 3, ["abc", "def"]],
    ["only the white space at the cut goes", "abcd ef", 2, 2, 2, ["ab", "cd ef"]],
    ["all of it", "ab  cd", 2, 2, 2, ["ab", "cd"]]
  ] as const)("%s", (_, text, max, parts, firstMax, expected) => {
    expect(splitText(text, max, parts, firstMax)).toEqual(expected)
  })

  it("a long header becomes up to 3 messages; the mentions open the first, the URL closes the last", () => {
    const line = `${"word ".repeat(150).trim()}\n`
    const header = line.repeat(4).trim()
    const m = renderMessages(rss(), { custom_header: header, split: true, mention_roles: [R1] })
    expect(m).toHaveLength(2)
    expect(m[0]!.content.startsWith(`<@&${R1}>\n`)).toBe(true)
    expect(m.every((x) => codePointLength(x.content) <= MAX_CONTENT)).toBe(true)
    expect(m[1]!.content.endsWith("\nhttps://news.test/posts/1")).toBe(true)
    expect(m.every((x) => x.allowed_mentions.roles?.[0] === R1)).toBe(true)
    // Nothing lost, only the cuts' white space.
    expect(m.map((x) => x.content).join("\n").replace(`<@&${R1}>\n`, "")).toBe(`${header}\nhttps://news.test/posts/1`)
    const huge = renderMessages(rss(), { custom_header: "x ".repeat(5000), split: true })
    expect(huge).toHaveLength(3)
    expect(huge[2]!.content.endsWith("…\nhttps://news.test/posts/1")).toBe(true)
    expect(codePointLength(huge[2]!.content)).toBeLessThanOrEqual(MAX_CONTENT)
    // Without split the same header is one cut message.
    expect(renderMessages(rss(), { custom_header: header })).toHaveLength(1)
  })

  // The text split is the header with its placeholders (up to 3 × 2,000 code points of it), then the
  // URL unless the header uses %url%; the last piece is cut as §3 says, an appended URL kept whole.
  const URL = "https://news.test/posts/1"
  it.each<readonly [string, DeliveryOptions, Partial<Parameters<typeof rss>[0]>, (contents: ReadonlyArray<string>) => void]>([
    ["a title of 5,000 through %title%: three messages, nothing lost before the last cut", { custom_header: "%title%" }, { title: "t ".repeat(2500).trim() }, (c) => {
      expect(c).toHaveLength(3)
      expect(c.map(codePointLength).slice(0, 2)).toEqual([1999, 1999])
      expect(c[2]).toBe(`${"t ".repeat(500).trim()}\n${URL}`)
    }],
    ["%url% in the header: nothing appended; the last piece cut as it is", { custom_header: `%url% ${"y ".repeat(2400)}end %url%` }, {}, (c) => {
      expect(c).toHaveLength(3)
      expect(c[0]!.startsWith(`${URL} y y`)).toBe(true)
      // The URL at its end stays after its space: not moved behind a line break as an appended one would be.
      expect(c[2]!.endsWith(` end ${URL}`)).toBe(true)
      expect(c.join(" ")).toBe(`${URL} ${"y ".repeat(2400)}end ${URL}`)
    }],
    ["an empty header: the URL alone, split when it is that long", { custom_header: "" }, { url: `https://news.test/${"p".repeat(4500)}` }, (c) => {
      expect(c.map(codePointLength)).toEqual([2000, 2000, 518])
      expect(c.join("")).toBe(`https://news.test/${"p".repeat(4500)}`)
    }],
    ["an empty header and a short URL: one message, the URL", { custom_header: "" }, {}, (c) => expect(c).toEqual([URL])]
  ])("%s", (_, options, item, check) => check(renderMessages(rss(item), { ...options, split: true }).map((m) => m.content)))

  it("mentions count against the 2,000: a long message with them is cut to exactly 2,000, the URL whole", () => {
    const prefix = `<@&${R1}>\n`
    for (const split of [false, true]) {
      const m = render(rss({ title: "w".repeat(3000) }), { custom_header: "%title%", mention_roles: [R1], split })
      expect(codePointLength(m.content)).toBe(MAX_CONTENT)
      expect(m.content.startsWith(prefix)).toBe(true)
      expect(m.content.endsWith(`…\n${URL}`) || split).toBe(true)
    }
    const one = render(rss({ title: "w".repeat(3000) }), { custom_header: "%title% %url%", mention_roles: [R1] })
    expect(codePointLength(one.content)).toBe(MAX_CONTENT)
  })
})

describe("forum posts", () => {
  const tags = [{ id: "1", name: "News" }, { id: "2", name: "Release" }]
  it("thread_name from the template (default %title%), at most 100; applied_tags the named tags, unknown ignored", () => {
    const m = render(rss(), { forum_tags: ["release", "Nope"] }, { forumTags: tags })
    expect(m.thread_name).toBe("Hello world")
    expect(m.applied_tags).toEqual(["2"])
    const named = render(rss({ title: "T".repeat(300) }), { forum_thread_name: "[%feed_name%] %title%" }, { forumTags: tags })
    expect(codePointLength(named.thread_name!)).toBe(100)
    expect(named.thread_name!.startsWith("[News Site] TTT")).toBe(true)
    expect(named.applied_tags).toBeUndefined()
    expect(render(rss(), { forum_tags: ["News"] }).thread_name).toBeUndefined()
    expect(render(microblog(), { forum_thread_name: "  " }, { forumTags: tags }).thread_name).toBe(microblog().url)
  })

  // What the first message of an item carries in a forum, option by option (the rest of the message as without a forum).
  const THREAD = "310000000000000110"
  it.each<readonly [string, DeliveryOptions, ReadonlyArray<{ id: string; name: string }> | null, Record<string, unknown>]>([
    ["not a forum: no post", { forum_tags: ["News"], forum_thread_name: "%title%" }, null, {}],
    ["a forum: a post named by the title", {}, tags, { thread_name: "Hello world" }],
    ["a forum without tags: named, untagged", { forum_tags: ["News"] }, [], { thread_name: "Hello world" }],
    ["tags in the forum's order, case and spaces aside", { forum_tags: [" release", "NEWS "] }, tags, { thread_name: "Hello world", applied_tags: ["1", "2"] }],
    ["thread_id null: a post", { thread_id: null, forum_tags: ["News"] }, tags, { thread_name: "Hello world", applied_tags: ["1"] }],
    ["thread_id: into that existing post, none opened (the platform refuses both)", { thread_id: THREAD, forum_tags: ["News"] }, tags, {}],
    ["mentions stay in the content, not the name", { mention_roles: [R1], forum_thread_name: "%title% by %author%" }, tags, { thread_name: "Hello world by Ann" }],
    ["%url% in the name", { forum_thread_name: "%url%" }, tags, { thread_name: "https://news.test/posts/1" }],
    ["censored (an NSFW item): the name's URLs wrapped like the content's", { forum_thread_name: "%title% %url%", nsfw: "censor" }, tags, {
      thread_name: "fuck this <https://news.test/posts/1>"
    }]
  ])("%s", (_, options, forumTags, expected) => {
    const item = options.nsfw === "censor" ? rss({ title: "fuck this" }) : rss()
    const m = render(item, options, { forumTags })
    const { thread_name, applied_tags } = m
    const got = { ...(thread_name === undefined ? {} : { thread_name }), ...(applied_tags === undefined ? {} : { applied_tags }) }
    expect(got).toEqual(expected)
    // The rest of the message is what it is without a forum.
    const { thread_name: _n, applied_tags: _t, ...rest } = m
    expect(rest).toEqual(render(item, options))
  })

  it("split: the first message opens the post, the others follow into it without a name; with an embed, the embed is the post's", () => {
    const header = Array.from({ length: 30 }, (_, i) => `line ${i} ${"x".repeat(90)}`).join("\n")
    const [first, ...rest] = renderMessages(rss(), { custom_header: header, split: true, forum_tags: ["News"] }, { forumTags: tags })
    expect(rest.length).toBeGreaterThan(0)
    expect([first!.thread_name, first!.applied_tags]).toEqual(["Hello world", ["1"]])
    for (const m of rest) expect([m.thread_name, m.applied_tags]).toEqual([undefined, undefined])
    const embedded = render(rss(), { embed: true, forum_tags: ["Release"] }, { forumTags: tags })
    expect([embedded.thread_name, embedded.applied_tags, embedded.embeds?.[0]?.description]).toEqual(["Hello world", ["2"], "Body **bold**"])
    expect(embedded.content).toBe("New item found in News Site!")
  })

  it("outgoing: a forum post carries no thread_id; with thread_id it goes into that post and opens none", () => {
    const post = outgoing(rss(), { forum_tags: ["News"] }, { forumTags: tags })
    expect([post.thread_id, post.thread_name, post.applied_tags]).toEqual([undefined, "Hello world", ["1"]])
    const into = outgoing(rss(), { thread_id: THREAD, forum_tags: ["News"] }, { forumTags: tags })
    expect([into.thread_id, into.thread_name, into.applied_tags]).toEqual([THREAD, undefined, undefined])
    for (const options of [{ thread_id: null }, {}]) {
      expect(Object.keys(outgoing(rss(), options, { forumTags: null })).sort()).toEqual(["allowed_mentions", "avatar_url", "content", "username"])
    }
    // A split's other messages travel with the first; one message has no `continued`.
    const split = outgoing(rss({ title: "t ".repeat(1500) }), { custom_header: "%title%", split: true, thread_id: THREAD })
    expect([split.thread_id, split.continued?.length, split.continued?.[0]?.content.endsWith(`\n${rss().url}`)]).toEqual([THREAD, 1, true])
    expect("continued" in outgoing(rss(), { split: true })).toBe(false)
  })
})

describe("text from a source pings no one but the feed's roles", () => {
  const hostile = "@everyone @here <@100000000000000001> <@&320000000000000199> <@!1>"
  it.each([
    ["rss title", rss({ title: hostile, contentHtml: `<p>${hostile}</p>` })],
    ["microblog text", microblog({ text: hostile, name: hostile })],
    ["photo caption", photo({ caption: hostile, fullname: hostile })],
    ["video", video({ title: hostile, description: hostile, channel: hostile })]
  ])("%s, in content and embed", (_, item) => {
    for (const options of [{}, { embed: true }, { mention_roles: [R1] }, { mention_roles: [R1], embed: true, split: true }]) {
      const header = item.module === "rss" ? "%title%" : item.module === "microblog" ? "%name%" : item.module === "photo" ? "%caption%" : "%title%"
      for (const m of renderMessages(item, { ...options, custom_header: header })) {
        expect(m.allowed_mentions.parse).toEqual([])
        expect(m.allowed_mentions.roles ?? []).toEqual("mention_roles" in options ? [R1] : [])
        expect(Object.keys(m.allowed_mentions).sort()).toEqual("mention_roles" in options ? ["parse", "roles"] : ["parse"])
        expect(JSON.stringify(m)).toContain("@everyone")
      }
    }
  })

  it("the rule itself: roles once each, in order; none → parse only", () => {
    expect(mentionRoles(null)).toEqual([])
    expect(mentionRoles([R2, R1, R2])).toEqual([R2, R1])
    expect(allowedMentions([])).toEqual({ parse: [] })
    expect(allowedMentions([R1])).toEqual({ parse: [], roles: [R1] })
    expect(mentionPrefix([])).toBe("")
    expect(mentionPrefix([R1, R2])).toBe(`<@&${R1}> <@&${R2}>\n`)
  })

  it("stored options are read back with the new ones, badly typed values dropped", () => {
    expect(readOptions({ mention_roles: [R1], embed: true, embed_color: "#000000", split: "yes", forum_tags: [1] }))
      .toEqual({ mention_roles: [R1], embed: true, embed_color: "#000000" })
  })
})
