/**
 * The message of delivery.md §3, exact strings: every module's default header, name and avatar;
 * every placeholder and its fallback; the %url% rule; unknown placeholders; the 2,000 cut; censor;
 * the username and avatar rules; a hostile header.
 */
import { describe, expect, it } from "vitest"
import type { Item } from "../../src/services/delivery/render/Item.ts"
import type { DeliveryOptions } from "../../src/services/delivery/render/Options.ts"
import { MAX_CONTENT, render } from "../../src/services/delivery/render/Render.ts"
import { codePointLength } from "../../src/services/delivery/render/Text.ts"
import { forum, microblog, photo, rss, streaming, video } from "./ItemFixtures.ts"

const content = (item: Item, custom_header: string | null, options: DeliveryOptions = {}) =>
  render(item, { ...options, custom_header }).content

describe("default header, name and avatar per module", () => {
  it.each([
    ["rss", rss(), "New item found in News Site!\nhttps://news.test/posts/1", "News Site", "https://news.test/logo.png"],
    [
      "forum",
      forum(),
      "New submission in /r/typescript from /u/bob!\nhttps://www.reddit.com/r/typescript/comments/abc/hello/",
      "/r/typescript",
      "https://img.test/ts.png"
    ],
    [
      "streaming live",
      streaming({ event: "live" }),
      ":red_circle: Now Live on Twitch: Caster | :video_game: Playing Chess.\nhttps://www.twitch.tv/caster",
      "Caster",
      "https://img.test/caster.png"
    ],
    [
      "streaming offline",
      streaming({ event: "offline" }),
      "Stream Offline: Caster | :video_game: Playing Chess.\nhttps://www.twitch.tv/caster",
      "Caster",
      "https://img.test/caster.png"
    ],
    [
      "microblog",
      microblog(),
      "New tweet from Jane Doe!\nhttps://x.com/jdoe/status/1790000000000000000",
      "jdoe",
      "https://img.test/jdoe.png"
    ],
    [
      "video added",
      video(),
      "Chan just added a video!\nhttps://www.youtube.com/watch?v=dQw4w9WgXcQ",
      "Chan",
      "https://img.test/chan.png"
    ],
    [
      "video updated",
      video({ event: "updated" }),
      "Chan just updated a video!\nhttps://www.youtube.com/watch?v=dQw4w9WgXcQ",
      "Chan",
      "https://img.test/chan.png"
    ],
    ["photo", photo(), "New post from pat!\nhttps://www.instagram.com/p/C0ffee/", "pat", "https://img.test/pat.png"]
  ] as const)("%s", (_, item, text, username, avatar_url) => {
    expect(render(item, {})).toEqual({ content: text, username, avatar_url, allowed_mentions: { parse: [] } })
    expect(render(item, { custom_header: null })).toEqual(render(item, {}))
  })
})

const longText = "x".repeat(1500)
const PLACEHOLDERS: ReadonlyArray<readonly [string, Item, string, string]> = [
  ["rss feed_name", rss(), "%feed_name%", "News Site"],
  ["rss feed_name → site URL", rss({ feedTitle: null }), "%feed_name%", "https://news.test/"],
  ["rss feed_name → site URL (blank title)", rss({ feedTitle: "  " }), "%feed_name%", "https://news.test/"],
  ["rss feed_name → feed URL", rss({ feedTitle: null, siteUrl: null }), "%feed_name%", "https://news.test/feed.xml"],
  ["rss author", rss(), "%author%", "Ann"],
  ["rss author → Unknown", rss({ author: null }), "%author%", "Unknown"],
  ["rss title", rss(), "%title%", "Hello world"],
  ["rss title → Unknown", rss({ title: null }), "%title%", "Unknown"],
  ["rss content (Markdown)", rss(), "%content%", "Body **bold**"],
  [
    "rss content with a link and a list",
    rss({ contentHtml: "<p>See <a href=\"https://a.test/x\">this</a></p><ul><li>one</li><li>two</li></ul>" }),
    "%content%",
    "See [this](https://a.test/x)\n\n* one\n* two"
  ],
  ["rss content → None", rss({ contentHtml: null }), "%content%", "None"],
  ["rss content → None (empty HTML)", rss({ contentHtml: "<p></p>" }), "%content%", "None"],
  ["rss content_clean", rss(), "%content_clean%", "Body bold"],
  [
    "rss content_clean: blocks, entities, script",
    rss({ contentHtml: "<h1>T&amp;C</h1><p>a&nbsp;&lt;b&gt; &#x1F600;<br>c</p><script>x()</script><ul><li>1</li><li>2</li></ul>" }),
    "%content_clean%",
    "T&C\n\na <b> 😀\nc\n\n1\n2"
  ],
  ["rss content_clean → None", rss({ contentHtml: null }), "%content_clean%", "None"],
  ["rss media_url", rss({ mediaUrl: "https://news.test/a.mp3" }), "%media_url%", "https://news.test/a.mp3"],
  ["rss media_url → empty", rss(), "[%media_url%]", "[]"],
  ["rss categories", rss({ categories: ["Tech", " ", " Rust "] }), "%categories%", "Tech, Rust"],
  ["rss categories → None", rss(), "%categories%", "None"],
  ["forum subreddit", forum(), "%subreddit%", "typescript"],
  ["forum subreddit_fullname", forum(), "%subreddit_fullname%", "t5_2qh1i"],
  ["forum author", forum(), "%author%", "bob"],
  ["forum title", forum(), "%title%", "Hello world"],
  ["forum flair", forum(), "%flair%", "Meme"],
  ["forum flair → None", forum({ flair: null }), "%flair%", "None"],
  ["forum content_url", forum(), "%content_url%", "https://example.test/article"],
  ["streaming display_name", streaming(), "%display_name%", "Caster"],
  ["streaming display_name → username", streaming({ displayName: "" }), "%display_name%", "caster"],
  ["streaming username", streaming(), "%username%", "caster"],
  ["streaming game", streaming(), "%game%", "Chess"],
  ["streaming game → Unknown", streaming({ game: null, gameId: null }), "%game%", "Unknown"],
  ["streaming status", streaming(), "%status%", "Blitz night"],
  ["streaming status → None", streaming({ status: null }), "%status%", "None"],
  ["streaming stream_status live", streaming(), "%stream_status%", "Live"],
  ["streaming stream_status offline", streaming({ event: "offline" }), "%stream_status%", "Offline"],
  ["microblog screen_name", microblog(), "%screen_name%", "jdoe"],
  ["microblog name", microblog(), "%name%", "Jane Doe"],
  ["microblog media_url, one per line", microblog({ mediaUrls: ["https://m.test/1.jpg", "https://m.test/2.jpg"] }), "%media_url%", "https://m.test/1.jpg\nhttps://m.test/2.jpg"],
  ["microblog media_url: none → its line removed", microblog(), "Hi %name%\n%media_url%\nbye", "Hi Jane Doe\nbye"],
  ["microblog media_url: none, on a line of its own at the end", microblog(), "Hi\n  %media_url%  ", "Hi"],
  ["microblog media_url: none, inside a line → empty", microblog(), "Media: [%media_url%]", "Media: []"],
  ["video title", video(), "%title%", "Hello world"],
  ["video channel", video(), "%channel%", "Chan"],
  ["video duration M:SS", video(), "%duration%", "3:32"],
  ["video duration H:MM:SS", video({ durationSeconds: 3723 }), "%duration%", "1:02:03"],
  ["video duration zero", video({ durationSeconds: 0 }), "%duration%", "0:00"],
  ["video duration → Unknown", video({ durationSeconds: null }), "%duration%", "Unknown"],
  ["video video_status", video({ event: "updated" }), "%video_status%", "updated"],
  ["video description", video(), "%description%", "A song."],
  ["video description ≤ 1,024", video({ description: longText }), "%description%", "x".repeat(1023) + "…"],
  ["video description → None", video({ description: null }), "%description%", "None"],
  ["video short_description ≤ 256", video({ description: longText }), "%short_description%", "x".repeat(255) + "…"],
  ["video short_description short", video(), "%short_description%", "A song."],
  ["video short_description → None", video({ description: " " }), "%short_description%", "None"],
  ["video tags", video({ tags: ["music", "80s"] }), "%tags%", "music, 80s"],
  ["video tags → None", video(), "%tags%", "None"],
  ["video thumbnail", video(), "%thumbnail%", "https://i.ytimg.test/vi/dQw4w9WgXcQ/hq.jpg"],
  ["video thumbnail → empty", video({ thumbnail: null }), "[%thumbnail%]", "[]"],
  ["photo username", photo(), "%username%", "pat"],
  ["photo fullname", photo(), "%fullname%", "Pat Smith"],
  ["photo fullname → username", photo({ fullname: null }), "%fullname%", "pat"],
  ["photo caption", photo(), "%caption%", "Hello world"],
  ["photo caption → None", photo({ caption: null }), "%caption%", "None"],
  ["photo media_url", photo(), "%media_url%", "https://cdn.test/p.jpg"],
  ["photo media_url → empty", photo({ mediaUrl: null }), "[%media_url%]", "[]"],
  ["photo hashtags", photo({ hashtags: ["cat", "#dog"] }), "%hashtags%", "#cat #dog"],
  ["photo hashtags → None", photo(), "%hashtags%", "None"],
  ["photo profile_url", photo(), "%profile_url%", "https://www.instagram.com/pat/"],
  ["another module's placeholder stays", rss(), "%flair% %game% %caption%", "%flair% %game% %caption%"]
]

describe("placeholders and their fallbacks", () => {
  it.each(PLACEHOLDERS)("%s", (_, item, header, expected) => {
    expect(content(item, header)).toBe(`${expected}\n${item.url}`)
  })

  it("microblog: a header of nothing but %media_url% and no media gives the URL alone", () => {
    expect(content(microblog(), "%media_url%")).toBe("https://x.com/jdoe/status/1790000000000000000")
  })
})

describe("%url% and unknown placeholders", () => {
  it.each([
    ["header uses %url%: nothing appended", "Read %title% at %url%", "Read Hello world at https://news.test/posts/1"],
    ["twice", "%url% %url%", "https://news.test/posts/1 https://news.test/posts/1"],
    ["no %url%: appended", "Read %title%", "Read Hello world\nhttps://news.test/posts/1"],
    ["placeholders are case-sensitive", "%URL% %Title%", "%URL% %Title%\nhttps://news.test/posts/1"],
    ["unknown words stay", "%foo% and %title%", "%foo% and Hello world\nhttps://news.test/posts/1"],
    ["a percent sign before a placeholder", "50%%title%", "50%Hello world\nhttps://news.test/posts/1"],
    ["an unknown word right before a placeholder", "%foo%%title%", "%foo%Hello world\nhttps://news.test/posts/1"],
    ["percent signs around text", "100% sure, %title%! 5%", "100% sure, Hello world! 5%\nhttps://news.test/posts/1"],
    ["white space is not a name", "% title % %%", "% title % %%\nhttps://news.test/posts/1"],
    ["unclosed", "%title", "%title\nhttps://news.test/posts/1"],
    ["empty header: the URL alone", "", "https://news.test/posts/1"]
  ] as const)("%s", (_, header, expected) => {
    expect(content(rss(), header)).toBe(expected)
  })

  it("values are not scanned again", () => {
    expect(content(rss({ title: "%url% %author% 100%" }), "%title%")).toBe("%url% %author% 100%\nhttps://news.test/posts/1")
  })
})

describe("the 2,000 cut (code points)", () => {
  const url = "https://news.test/posts/1" // 25 code points: "\n" + url = 26
  const room = MAX_CONTENT - 26

  it.each([
    ["exactly 2,000 with the URL: kept", "a".repeat(room), "a".repeat(room) + "\n" + url],
    ["one more: cut before the URL", "a".repeat(room + 1), "a".repeat(room - 1) + "…\n" + url],
    ["far longer", "a".repeat(5000), "a".repeat(room - 1) + "…\n" + url],
    ["an emoji is one character", "😀".repeat(room), "😀".repeat(room) + "\n" + url],
    ["emoji at the boundary", "a".repeat(room - 2) + "😀😀😀", "a".repeat(room - 2) + "😀…\n" + url],
    ["a skin-toned emoji is not split", "a".repeat(room - 2) + "👍🏽👍🏽", "a".repeat(room - 2) + "…\n" + url],
    ["a flag is not split", "a".repeat(room - 2) + "🇫🇷🇫🇷", "a".repeat(room - 2) + "…\n" + url],
    ["white space before the ellipsis is dropped", "a".repeat(room - 3) + "   bbb", "a".repeat(room - 3) + "…\n" + url],
    [
      "a URL in the text is not split",
      "a".repeat(room - 20) + " https://example.test/" + "p".repeat(40),
      "a".repeat(room - 20) + "…\n" + url
    ]
  ] as const)("%s", (_, title, expected) => {
    const text = content(rss({ title }), "%title%")
    expect(text).toBe(expected)
    expect(codePointLength(text)).toBeLessThanOrEqual(MAX_CONTENT)
  })

  it("without an appended URL: cut to 1,999 and …", () => {
    const text = content(rss({ title: "b".repeat(3000) }), "%url% %title%")
    expect(text).toBe(`${url} ${"b".repeat(MAX_CONTENT - 27)}…`)
    expect(codePointLength(text)).toBe(MAX_CONTENT)
  })

  it("emoji at the boundary without an appended URL", () => {
    const text = content(rss({ title: "😀".repeat(2500) }), "%title%%url%")
    expect(text).toBe("😀".repeat(MAX_CONTENT - 1) + "…")
    expect(text.length).toBe(2 * (MAX_CONTENT - 1) + 1)
  })

  it("a URL too long to keep whole is dropped with its line", () => {
    const long = "https://news.test/" + "p".repeat(2100)
    expect(content(rss({ url: long }), null)).toBe("New item found in News Site!…")
  })
})

describe("censor", () => {
  const nsfw = rss({ title: "what the fuck", contentHtml: "<p>See <a href=\"https://a.test/x\">this</a></p>" })

  it.each([
    ["the appended URL", nsfw, null, "New item found in News Site!\n<https://news.test/posts/1>"],
    ["every URL, Markdown links too", nsfw, "%url% %content% https://b.test/y.", "<https://news.test/posts/1> See [this](<https://a.test/x>) <https://b.test/y>."],
    ["an already wrapped URL stays as it is", nsfw, "<https://c.test/> %title%", "<https://c.test/> what the fuck\n<https://news.test/posts/1>"],
    ["parentheses of the URL kept", nsfw, "(https://w.test/Foo_(bar)) %url%", "(<https://w.test/Foo_(bar)>) <https://news.test/posts/1>"],
    ["a forum post over 18", forum({ over18: true }), "%content_url%", "<https://example.test/article>\n<https://www.reddit.com/r/typescript/comments/abc/hello/>"],
    ["an age-restricted video", video({ ageRestricted: true }), "%thumbnail%", "<https://i.ytimg.test/vi/dQw4w9WgXcQ/hq.jpg>\n<https://www.youtube.com/watch?v=dQw4w9WgXcQ>"],
    ["a clean item is not censored", rss(), null, "New item found in News Site!\nhttps://news.test/posts/1"]
  ] as const)("%s", (_, item, header, expected) => {
    expect(content(item, header, { nsfw: "censor" })).toBe(expected)
  })

  it("only censor wraps: skip and only render as is", () => {
    expect(content(nsfw, null, { nsfw: "only" })).toBe("New item found in News Site!\nhttps://news.test/posts/1")
    expect(content(nsfw, null, { nsfw: "skip" })).toBe("New item found in News Site!\nhttps://news.test/posts/1")
  })

  it("a cut never leaves half a wrapped URL", () => {
    const title = "fuck " + "a".repeat(1900) + " https://long.test/" + "q".repeat(200)
    const text = content(rss({ title }), "%title%", { nsfw: "censor" })
    expect(text).toBe("fuck " + "a".repeat(1900) + "…\n<https://news.test/posts/1>")
  })
})

describe("username and avatar", () => {
  const message = (item: Item, options: DeliveryOptions, defaults?: { name?: string | null; avatarUrl?: string | null }) => {
    const { content: _, ...rest } = render(item, options, defaults)
    return rest
  }
  const none = { allowed_mentions: { parse: [] } }

  it.each([
    ["webhook-name wins", forum(), { "webhook-name": "Feeds" }, undefined, { username: "Feeds", avatar_url: "https://img.test/ts.png" }],
    ["no-username-overwrite omits it, webhook-name too", forum(), { "webhook-name": "Feeds", "no-username-overwrite": true }, undefined, { avatar_url: "https://img.test/ts.png" }],
    ["no-avatar-overwrite omits the avatar", forum(), { "no-avatar-overwrite": true }, undefined, { username: "/r/typescript" }],
    ["both omitted", forum(), { "no-username-overwrite": true, "no-avatar-overwrite": true }, undefined, {}],
    ["rss without a feed title or image: omitted", rss({ feedTitle: null, feedImage: null }), {}, undefined, {}],
    ["… or the caller's defaults", rss({ feedTitle: null, feedImage: null }), {}, { name: "Alice", avatarUrl: "https://d.test/a.png" }, { username: "Alice", avatar_url: "https://d.test/a.png" }],
    ["a name Discord refuses (\"discord\") falls through", rss({ feedTitle: "Discord Blog" }), {}, undefined, { avatar_url: "https://news.test/logo.png" }],
    ["a webhook-name Discord refuses falls back to the default", photo(), { "webhook-name": "clyde fan" }, undefined, { username: "pat", avatar_url: "https://img.test/pat.png" }],
    ["\"everyone\" is refused", photo({ username: "Everyone" }), {}, { name: "Backup" }, { username: "Backup", avatar_url: "https://img.test/pat.png" }],
    ["white space collapsed", rss({ feedTitle: "  News \n  Site " }), {}, undefined, { username: "News Site", avatar_url: "https://news.test/logo.png" }],
    ["cut to 80", rss({ feedTitle: "n".repeat(100) }), {}, undefined, { username: "n".repeat(79) + "…", avatar_url: "https://news.test/logo.png" }],
    ["an avatar that is not http(s) is dropped", photo({ profilePicture: "data:image/png;base64,AA" }), {}, undefined, { username: "pat" }]
  ] as const)("%s", (_, item, options, defaults, expected) => {
    expect(message(item, options, defaults)).toEqual({ ...expected, ...none })
  })
})

describe("a hostile header is bounded and pings no one", () => {
  it("mentions and 5,000 characters of placeholders", () => {
    const item = rss({ contentHtml: `<p>${"word ".repeat(20_000)}</p>` })
    const header = "@everyone <@123> <@&456> " + "%content%%title%%timestamp_Mars/Base%".repeat(140)
    expect(header.length).toBeGreaterThan(5000)
    const m = render(item, { custom_header: header })
    expect(codePointLength(m.content)).toBe(MAX_CONTENT)
    expect(m.content.startsWith("@everyone <@123> <@&456> word word")).toBe(true)
    expect(m.content.endsWith("…\nhttps://news.test/posts/1")).toBe(true)
    expect(m.allowed_mentions).toEqual({ parse: [] })
  })

  it("placeholders that expand to nothing cannot make an empty message", () => {
    expect(content(microblog(), "%media_url%\n%media_url%")).toBe("https://x.com/jdoe/status/1790000000000000000")
  })
})
