/**
 * Message cases (delivery.md §3) issue #19's mutation run found unpinned: the names Discord refuses
 * ("here", a name of white space only), what counts as an http(s) avatar, and the 2,000 cut when
 * the appended URL leaves room for one character only (the URL is kept whole).
 */
import { describe, expect, it } from "vitest"
import type { Item } from "../../src/services/delivery/render/Item.ts"
import type { DeliveryOptions } from "../../src/services/delivery/render/Options.ts"
import { MAX_CONTENT, render, webhookUsername } from "../../src/services/delivery/render/Render.ts"
import { codePointLength } from "../../src/services/delivery/render/Text.ts"
import { photo, rss } from "./ItemFixtures.ts"

const identity = (item: Item, options: DeliveryOptions = {}, defaults?: { name?: string | null; avatarUrl?: string | null }) => {
  const { content: _, allowed_mentions: __, ...rest } = render(item, options, defaults)
  return rest
}

describe("username: a name Discord refuses falls through to the next", () => {
  it.each(["here", "Here", "  HERE  ", "everyone", "   ", "\n\t"])("webhook-name %j: the module's default name", (name) => {
    expect(identity(photo(), { "webhook-name": name })).toEqual({ username: "pat", avatar_url: "https://img.test/pat.png" })
  })

  it("a name of white space only, at every level: no username at all", () => {
    expect(identity(rss({ feedTitle: " ", feedImage: null }), { "webhook-name": "  " }, { name: "\t" })).toEqual({})
  })

  it("names that only contain \"here\" or \"everyone\" are fine", () => {
    expect(["here and there", "everyone's feed", "Where"].map(webhookUsername)).toEqual(["here and there", "everyone's feed", "Where"])
  })
})

describe("avatar_url: an http(s) URL only", () => {
  it.each([
    ["http is accepted", "http://img.test/pat.png", "http://img.test/pat.png"],
    ["upper-case scheme is accepted", "HTTPS://img.test/pat.png", "HTTPS://img.test/pat.png"],
    ["white space around it is dropped", "  https://img.test/pat.png\n", "https://img.test/pat.png"]
  ] as const)("%s", (_, avatar, expected) => {
    expect(identity(photo({ profilePicture: avatar }))).toEqual({ username: "pat", avatar_url: expected })
  })

  it.each([
    ["a URL after something else", "javascript:alert(1)//https://img.test/pat.png"],
    ["text after the URL", "https://img.test/pat.png and more"],
    ["white space inside", "https://img.test/my pat.png"],
    ["another scheme", "ftp://img.test/pat.png"],
    ["a scheme alone", "https://"]
  ] as const)("%s: the caller's default instead", (_, avatar) => {
    expect(identity(photo({ profilePicture: avatar }), {}, { avatarUrl: "https://d.test/a.png" }))
      .toEqual({ username: "pat", avatar_url: "https://d.test/a.png" })
  })
})

describe("the 2,000 cut when the URL leaves room for one character", () => {
  it("the header becomes the ellipsis alone and the URL is kept whole", () => {
    const url = "https://news.test/" + "p".repeat(MAX_CONTENT - 2 - "https://news.test/".length) // "\n" + url = 1,999
    const content = render(rss({ url }), {}).content
    expect(content).toBe("…\n" + url)
    expect(codePointLength(content)).toBe(MAX_CONTENT)
  })

  it("one character less of URL: two characters of room, one of header and the ellipsis", () => {
    const url = "https://news.test/" + "p".repeat(MAX_CONTENT - 3 - "https://news.test/".length)
    expect(render(rss({ url }), {}).content).toBe("N…\n" + url)
  })
})
