/** The RSS client's pure parts: which documents are feeds (the one reader), their titles, and which addresses are private. */
import { assert, describe, it } from "@effect/vitest"
import { readFeedBytes } from "../../src/layers/sources/poll/FeedReader.ts"
import { isPrivateAddress } from "../../src/layers/sources/Rss.ts"

/** The one reader (poll/FeedReader.ts) as the creation check calls it: the feed's title, or the reason. */
const titleOf = (text: string): string | null | undefined => {
  const r = readFeedBytes(Buffer.from(text), "application/xml", "https://feeds.test/feed.xml", "The feed")
  return r._tag === "Read" ? r.feed.title : undefined
}

describe("the creation check reads with the poller's reader", () => {
  it("reads RSS 2.0, RSS 1.0 (RDF) and Atom titles", () => {
    assert.strictEqual(titleOf(`<rss version="2.0"><channel><title><![CDATA[A & B]]></title></channel></rss>`), "A & B")
    assert.strictEqual(
      titleOf(`<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/"><channel><title>RDF feed</title></channel></rdf:RDF>`),
      "RDF feed"
    )
    assert.strictEqual(titleOf(`<feed xmlns="http://www.w3.org/2005/Atom"><title type="text">  Atom\n feed </title></feed>`), "Atom feed")
    assert.strictEqual(titleOf(`<atom:feed xmlns:atom="http://www.w3.org/2005/Atom"><atom:title>Prefixed</atom:title></atom:feed>`), "Prefixed")
  })

  it("reads what lenient readers read (delivery.md §1): HTML entities, bare ampersands, no namespace, a blank line before <?xml", () => {
    assert.strictEqual(titleOf(`<rss><channel><title>Tom &amp; Jerry&nbsp;News</title></channel></rss>`), "Tom & Jerry News")
    assert.strictEqual(titleOf(`<rss><channel><title>Fish & Chips</title></channel></rss>`), "Fish & Chips")
    assert.strictEqual(titleOf(`<feed><title>no namespace</title></feed>`), "no namespace")
    assert.strictEqual(titleOf(`\n\n<?xml version="1.0"?><rss version="2.0"><channel><title>Blank first</title></channel></rss>`), "Blank first")
    assert.isNull(titleOf(`<rss version="2.0"></rss>`))
  })

  it("refuses HTML, other XML and garbage, in the reader's words", () => {
    for (const text of [
      `<!DOCTYPE html><html><head><title>x</title></head><body></body></html>`,
      `<html><body><p>unclosed</body></html>`,
      `<?xml version="1.0"?><sitemap><url/></sitemap>`,
      `{"title": "json"}`,
      ""
    ]) assert.isUndefined(titleOf(text), text)
    const page = readFeedBytes(Buffer.from("<html></html>"), "text/html", "https://x.test/", "The feed at https://x.test/")
    assert.deepStrictEqual(page, { _tag: "Unreadable", reason: "The feed at https://x.test/ is a web page, not an RSS or Atom feed." })
  })

  it("does not expand internal DTD entities (no entity-expansion bombs)", () => {
    const bomb = `<?xml version="1.0"?><!DOCTYPE rss [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><rss><channel><title>&b;</title></channel></rss>`
    assert.strictEqual(titleOf(bomb), "&b;")
  })
})

describe("isPrivateAddress", () => {
  it("flags loopback, private, link-local, CGNAT, mapped and unique-local addresses", () => {
    for (const a of ["127.0.0.1", "10.0.0.1", "172.16.5.4", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0", "::1", "::", "fd00::1", "fe80::1", "::ffff:127.0.0.1", "224.0.0.1", "::ffff:10.0.0.1"]) {
      assert.isTrue(isPrivateAddress(a), a)
    }
  })

  it("flags IPv6 forms that carry a private IPv4 address, and tunnels", () => {
    for (const a of [
      "::127.0.0.1", "::7f00:1", "::ffff:7f00:1", "::ffff:0:127.0.0.1", "::ffff:0:a00:1", "2002:7f00:1::", "2002:a00:1::1",
      "2002:c0a8:101::", "64:ff9b::127.0.0.1", "64:ff9b::a9fe:a9fe", "64:ff9b:1::1", "2001:0:4136:e378:8000:63bf:3fff:fdd2",
      "::10.0.0.1", "fe80::1%eth0", "192.88.99.1"
    ]) {
      assert.isTrue(isPrivateAddress(a), a)
    }
  })

  it("lets public addresses through", () => {
    for (const a of ["93.184.216.34", "8.8.8.8", "2606:4700:4700::1111", "172.32.0.1", "::ffff:8.8.8.8", "2002:808:808::1", "2a00:1450:4001:80b::200e"]) assert.isFalse(isPrivateAddress(a), a)
  })
})
