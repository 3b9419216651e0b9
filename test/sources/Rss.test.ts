/** The RSS client's pure parts: which documents are feeds, their titles, and which addresses are private. */
import { assert, describe, it } from "@effect/vitest"
import { feedTitle, isPrivateAddress } from "../../src/layers/sources/Rss.ts"

describe("feedTitle", () => {
  it("reads RSS 2.0, RSS 1.0 (RDF) and Atom titles", () => {
    assert.strictEqual(feedTitle(`<rss version="2.0"><channel><title><![CDATA[A & B]]></title></channel></rss>`), "A & B")
    assert.strictEqual(
      feedTitle(`<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/"><channel><title>RDF feed</title></channel></rdf:RDF>`),
      "RDF feed"
    )
    assert.strictEqual(feedTitle(`<feed xmlns="http://www.w3.org/2005/Atom"><title type="text">  Atom\n feed </title></feed>`), "Atom feed")
    assert.strictEqual(feedTitle(`<atom:feed xmlns:atom="http://www.w3.org/2005/Atom"><atom:title>Prefixed</atom:title></atom:feed>`), "Prefixed")
  })

  it("tolerates undefined (HTML) entities, kept as text, and bare ampersands, as feed readers do", () => {
    assert.strictEqual(feedTitle(`<rss><channel><title>Tom &amp; Jerry&nbsp;News</title></channel></rss>`), "Tom & Jerry&nbsp;News")
    assert.strictEqual(feedTitle(`<rss><channel><title>Fish & Chips</title></channel></rss>`), "Fish & Chips")
  })

  it("refuses HTML, other XML, an Atom-named root without the namespace, and garbage", () => {
    assert.isUndefined(feedTitle(`<!DOCTYPE html><html><head><title>x</title></head><body></body></html>`))
    assert.isUndefined(feedTitle(`<html><body><p>unclosed</body></html>`))
    assert.isUndefined(feedTitle(`<?xml version="1.0"?><sitemap><url/></sitemap>`))
    assert.isUndefined(feedTitle(`<feed><title>no namespace</title></feed>`))
    assert.isUndefined(feedTitle(`<rss version="2.0"></rss>`))
    assert.isUndefined(feedTitle(`{"title": "json"}`))
    assert.isUndefined(feedTitle(""))
  })

  it("does not expand internal DTD entities (no entity-expansion bombs)", () => {
    const bomb = `<?xml version="1.0"?><!DOCTYPE rss [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><rss><channel><title>&b;</title></channel></rss>`
    assert.strictEqual(feedTitle(bomb), "&b;")
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
