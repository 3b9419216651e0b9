/**
 * The rss reader on real feeds from public test corpora (test/fixtures/feeds, sources in its README)
 * and on the ways feeds in the wild are broken: bytes before the declaration, BOMs, lying charsets,
 * bare `&`, HTML entities, missing or wrong namespaces, unescaped HTML, relative links, odd dates.
 */
import { assert, describe, it } from "@effect/vitest"
import { parseFeedDate } from "../../../src/layers/sources/poll/FeedDate.ts"
import { type Feed, readFeed } from "../../../src/layers/sources/poll/FeedRead.ts"
import { decodeFeed } from "../../../src/layers/sources/poll/FeedText.ts"
import { feedItems } from "../../../src/layers/sources/poll/RssPoller.ts"
import { fixture } from "./PollServerFixtures.ts"

const read = (bytes: Uint8Array | string, url = "https://example.org/feed.xml", contentType?: string): Feed => {
  const feed = readFeed(decodeFeed(typeof bytes === "string" ? Buffer.from(bytes, "utf8") : bytes, contentType), url)
  if (feed === undefined) throw new Error("not a feed")
  return feed
}
const iso = (d: Date | null) => d?.toISOString() ?? null
const latin1 = (s: string) => Buffer.from(s, "latin1")

describe("real feeds", () => {
  it("RSS 1.0 (RDF, craigslist): 25 items, rdf:about ids, dc:date, CDATA titles with references and markup", () => {
    const feed = read(fixture("rdf-craigslist.xml"), "https://sfbay.craigslist.org/search/apa?format=rss")
    assert.strictEqual(feed.format, "rdf")
    assert.strictEqual(feed.title, "craigslist SF bay area | apts/housing for rent search")
    assert.strictEqual(feed.siteUrl, "https://sfbay.craigslist.org/search/apa")
    assert.strictEqual(feed.entries.length, 25)
    const first = feed.entries[0]!
    assert.strictEqual(first.id, "http://sfbay.craigslist.org/eby/apa/6186664607.html")
    assert.strictEqual(first.url, "http://sfbay.craigslist.org/eby/apa/6186664607.html")
    assert.strictEqual(first.title, "Bright, Spacious Beautiful Victorian (oakland north / temescal) $4300 3bd 1930ft2")
    assert.strictEqual(iso(first.publishedAt), "2017-06-21T17:33:10.000Z")
    // A relative link in the content resolves against the feed's URL.
    assert.include(feed.entries[24]!.contentHtml ?? "", "href=\"https://sfbay.craigslist.org/fb/sfo/apa/6170845890\"")
  })

  it("Atom (heise): 15 entries, ids, alternate links, author of the feed, logo", () => {
    const feed = read(fixture("atom-heise.xml"))
    assert.strictEqual(feed.format, "atom")
    assert.strictEqual(feed.title, "heise developer neueste Meldungen")
    assert.strictEqual(feed.siteUrl, "http://www.heise.de/developer/")
    assert.strictEqual(feed.image, "http://www.heise.de/developer/icons/heise_developer_logo_weiss.gif")
    assert.strictEqual(feed.entries.length, 15)
    assert.deepStrictEqual(
      { ...feed.entries[0]!, contentHtml: null },
      {
        id: "http://heise.de/-3088438",
        url: "http://www.heise.de/developer/meldung/Java-Anwendungsserver-Red-Hat-gibt-WildFly-10-frei-3088438.html?wt_mc=rss.developer.beitrag.atom",
        title: "Java-Anwendungsserver: Red Hat gibt WildFly 10 frei",
        author: "heise online",
        contentHtml: null,
        mediaUrl: null,
        categories: [],
        publishedAt: new Date("2016-02-01T16:22:00.000Z")
      }
    )
    assert.strictEqual(feed.entries[1]!.title, "Scrum Day 2016: Bewerbungen für Vorträge und Workshops")
  })

  it("Atom with a blank line before the XML declaration (YouTube): media:group content, published date", () => {
    const feed = read(fixture("atom-youtube-leading-blank.xml"))
    assert.strictEqual(feed.title, "Google")
    assert.strictEqual(feed.entries.length, 15)
    const e = feed.entries[0]!
    assert.strictEqual(e.id, "yt:video:5shykyfmb28")
    assert.strictEqual(e.url, "http://www.youtube.com/watch?v=5shykyfmb28")
    assert.strictEqual(e.mediaUrl, "https://www.youtube.com/v/5shykyfmb28?version=3")
    assert.strictEqual(iso(e.publishedAt), "2015-05-04T00:01:27.000Z")
  })

  it("ISO-8859-1 as declared (JN, feedburner): accents, categories, RFC 822 dates", () => {
    const feed = read(fixture("rss-jn-iso-8859-1.xml"))
    assert.strictEqual(feed.title, "Jornal de Notícias - Últimas Notícias")
    assert.strictEqual(feed.entries.length, 40)
    const e = feed.entries[0]!
    assert.strictEqual(e.title, "Mãe de utente é a nova presidente da Raríssimas")
    assert.deepStrictEqual(e.categories, ["Nacional"])
    assert.strictEqual(iso(e.publishedAt), "2018-01-03T13:47:00.000Z")
    assert.strictEqual(iso(feed.updatedAt), "2018-01-03T14:11:52.000Z")
  })

  it("Latin-1 bytes with no declaration at all (UOL): decoded, Portuguese day and month names read", () => {
    const feed = read(fixture("rss-uol-latin1-undeclared.xml"))
    assert.strictEqual(feed.entries.length, 15)
    const e = feed.entries[0]!
    assert.strictEqual(e.title, "Ibope: Bolsonaro perde de Haddad, Ciro e Alckmin em simulações de 2º turno")
    // "Seg, 24 Set 2018 19:42:40 -0300"
    assert.strictEqual(iso(e.publishedAt), "2018-09-24T22:42:40.000Z")
  })

  it("RSS 0.92 (O'Reilly example): enclosures, categories, a `1500` time without a colon", () => {
    const feed = read(fixture("rss092-heraldsun.xml"))
    assert.strictEqual(iso(feed.updatedAt), "2002-04-03T15:00:00.000Z")
    assert.deepStrictEqual(feed.entries.map((e) => [e.id, e.mediaUrl, e.publishedAt]), [
      ["http://www.oreilly.com/example/001.html", "http://www.oreilly.com/001.mp3", null],
      ["http://www.oreilly.com/example/002.html", "http://www.oreilly.com/002.mp3", null]
    ])
  })

  it("an unreadable dc:date falls back to pubDate (feedjira InvalidDateFormat)", () => {
    const feed = read(fixture("rss-invalid-date.xml"))
    assert.deepStrictEqual(feed.entries.map((e) => iso(e.publishedAt)), ["2017-10-16T15:10:00.000Z", "2017-10-17T12:17:00.000Z"])
  })

  it("feedparser's ill-formed corpus: unclosed root, windows-1252 as C1, invalid bytes after a BOM, HTML entity, undeclared prefix", () => {
    assert.strictEqual(read(fixture("fp-unclosed-root.xml")).entries[0]!.url, "http://link/get?a=1&b=2")
    assert.strictEqual(read(fixture("fp-demoronize.xml")).entries[0]!.contentHtml, "don’t")
    assert.strictEqual(read(fixture("fp-invalid-bytes-with-bom.xml")).title, "Valid UTF8: ѨInvalid UTF8: España")
    assert.strictEqual(read(fixture("fp-html-entity.xml")).title, "testing é entity")
    assert.strictEqual(read(fixture("fp-undeclared-namespace.xml")).format, "rss")
    assert.strictEqual(read(fixture("fp-atom-unclosed.xml")).siteUrl, "http://domain/?a=1&b=2")
  })
})

const rss = (items: string, channel = "<title>T</title><link>https://example.org/</link>") =>
  `<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel>${channel}${items}</channel></rss>`

describe("lenient reading", () => {
  it("stray bytes and blank lines before the XML declaration, and junk after the root", () => {
    const text = `\r\n\n  \u0000garbage<!-- x --> ${rss("<item><guid>a</guid></item>")}\n\nTRAILING <junk>`
    assert.deepStrictEqual(read(text).entries.map((e) => e.id), ["a"])
  })

  it("a BOM wins over the declaration; BOM then blank lines is fine", () => {
    const body = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(`\n\n${rss("<item><title>Café</title></item>").replace("utf-8", "iso-8859-1")}`)])
    assert.strictEqual(read(body).entries[0]!.title, "Café")
  })

  it("declared ISO-8859-1 (header and declaration) but sent as UTF-8 → read as UTF-8", () => {
    const body = Buffer.from(rss("<item><title>Crème brûlée — “quoted”</title></item>").replace("utf-8", "ISO-8859-1"), "utf8")
    assert.strictEqual(read(body, undefined, "application/rss+xml; charset=iso-8859-1").entries[0]!.title, "Crème brûlée — “quoted”")
  })

  it("declared UTF-8 but sent as windows-1252 → each stray byte read as windows-1252, UTF-8 parts kept", () => {
    const body = Buffer.concat([
      Buffer.from(rss("<item><title>X</title></item>").split("X")[0]!, "utf8"),
      latin1("caf\u00e9 don"), Buffer.from([0x92]), latin1("t "), Buffer.from("naïve", "utf8"),
      Buffer.from(rss("<item><title>X</title></item>").split("X")[1]!, "utf8")
    ])
    assert.strictEqual(read(body).entries[0]!.title, "café don’t naïve")
  })

  it("the HTTP charset decodes bytes that are not UTF-8 (ISO-8859-2, windows-1251)", () => {
    const latin2 = Buffer.concat([Buffer.from(rss("<item><title>").split("<item>")[0]!.replace("utf-8", "iso-8859-2")), Buffer.from("<item><title>"), Buffer.from([0xa3, 0xf3, 0x64, 0xbc]), Buffer.from("</title></item></channel></rss>")])
    assert.strictEqual(read(latin2, undefined, "text/xml; charset=ISO-8859-2").entries[0]!.title, "Łódź")
    const cyrillic = Buffer.concat([Buffer.from("<rss><channel><item><title>"), Buffer.from([0xcf, 0xf0, 0xe8, 0xe2, 0xe5, 0xf2]), Buffer.from("</title></item></channel></rss>")])
    assert.strictEqual(read(cyrillic, undefined, "application/xml; charset=windows-1251").entries[0]!.title, "Привет")
  })

  it("bare `&`, HTML entities, numeric windows-1252 references and a `<` that starts no tag", () => {
    const feed = read(rss(
      "<item><title>Tom & Jerry &nbsp;&eacute;t&eacute; &mdash; it&#146;s 3 < 4 &hellip;</title>" +
        "<link>https://example.org/?a=1&b=2</link><description>caf&eacute; &copy; &unknown; AT&T</description></item>"
    ))
    const e = feed.entries[0]!
    assert.strictEqual(e.title, "Tom & Jerry été — it’s 3 < 4 …")
    assert.strictEqual(e.url, "https://example.org/?a=1&b=2")
    assert.strictEqual(e.contentHtml, "café © &unknown; AT&T")
  })

  it("Atom without its namespace, or with a wrong one, still reads", () => {
    for (const xmlns of ["", ` xmlns="http://www.w3.org/2005/atom"`, ` xmlns="http://example.com/not-atom"`]) {
      const feed = read(`<feed${xmlns}><title>A</title><link href="https://example.org/"/><entry><id>e1</id><title>One</title>` +
        `<link rel="alternate" href="/posts/1"/><updated>2024-03-01T10:00:00+01:00</updated></entry></feed>`)
      assert.strictEqual(feed.format, "atom")
      assert.deepStrictEqual(feed.entries.map((e) => [e.id, e.url, e.title, iso(e.publishedAt)]), [
        ["e1", "https://example.org/posts/1", "One", "2024-03-01T09:00:00.000Z"]
      ])
    }
  })

  it("undeclared prefixes (dc, media, content) and atom:link in RSS are recognised by their usual names", () => {
    const feed = read(`<rss version="2.0"><channel><title>T</title><atom:link rel="self" href="https://example.org/feed"/><link>https://example.org/</link>` +
      `<item><title>I</title><dc:creator>Jane</dc:creator><media:content url="/img/1.jpg"/>` +
      `<content:encoded><![CDATA[<p>Full</p>]]></content:encoded><category>a</category><dc:subject>b</dc:subject></item></channel></rss>`)
    assert.strictEqual(feed.siteUrl, "https://example.org/")
    const e = feed.entries[0]!
    assert.deepStrictEqual([e.author, e.mediaUrl, e.contentHtml, e.categories], ["Jane", "https://example.org/img/1.jpg", "<p>Full</p>", ["a", "b"]])
  })

  it("relative links resolve against the feed URL (after redirects) and xml:base", () => {
    const feed = read(
      `<feed xmlns="http://www.w3.org/2005/Atom" xml:base="https://blog.example.net/base/"><title>B</title>` +
        `<entry xml:base="sub/"><id>x</id><link href="post.html"/>` +
        `<content type="html">&lt;a href="../other.html"&gt;o&lt;/a&gt; &lt;img src='/i.png'&gt;</content></entry></feed>`,
      "https://example.org/feed.xml"
    )
    const e = feed.entries[0]!
    assert.strictEqual(e.url, "https://blog.example.net/base/sub/post.html")
    assert.strictEqual(e.contentHtml, "<a href=\"https://blog.example.net/base/other.html\">o</a> <img src='https://blog.example.net/i.png'>")
    const plain = read(rss("<item><link>/a/b</link><guid isPermaLink=\"false\">g1</guid></item>", "<title>T</title><link>/</link>"), "https://news.example.com/rss/feed.xml")
    assert.deepStrictEqual([plain.siteUrl, plain.entries[0]!.url, plain.entries[0]!.id], ["https://news.example.com/", "https://news.example.com/a/b", "g1"])
  })

  it("HTML pasted unescaped into a description is kept as HTML (the loose reader takes over)", () => {
    const feed = read(rss("<item><title>T</title><description><p>Hello<br>world<b>bold</p></description><guid>x</guid></item>"))
    assert.strictEqual(feed.entries[0]!.contentHtml, "<p>Hello<br>world<b>bold</b></p>")
    assert.strictEqual(feed.entries[0]!.id, "x")
  })

  it("Atom text constructs: html titles lose their tags, xhtml content is serialised, text content is escaped", () => {
    const feed = read(`<feed xmlns="http://www.w3.org/2005/Atom"><title type="html">&lt;b&gt;Bold&lt;/b&gt; &amp;amp; co</title>` +
      `<entry><id>1</id><title type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml">X<em>Y</em></div></title>` +
      `<content type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml"><p>Hi <a href="/x">x</a></p></div></content></entry>` +
      `<entry><id>2</id><title>a &lt; b</title><summary>1 &lt; 2 &amp; 3</summary><author><name>Ann</name></author></entry></feed>`)
    assert.strictEqual(feed.title, "Bold & co")
    assert.deepStrictEqual(feed.entries.map((e) => [e.title, e.contentHtml, e.author]), [
      ["XY", "<p>Hi <a href=\"https://example.org/x\">x</a></p>", null],
      ["a < b", "1 &lt; 2 &amp; 3", "Ann"]
    ])
  })

  it("item ids: guid, else link, else a hash of title and date (stable, and different for another date)", () => {
    const feed = read(rss(
      "<item><guid> g </guid><link>https://example.org/1</link></item>" +
        "<item><link>https://example.org/2</link></item>" +
        "<item><title>Same</title><pubDate>Mon, 01 Jan 2024 00:00:00 GMT</pubDate></item>" +
        "<item><title>Same</title><pubDate>Tue, 02 Jan 2024 00:00:00 GMT</pubDate></item>"
    ))
    const ids = feed.entries.map((e) => e.id)
    assert.deepStrictEqual(ids.slice(0, 2), ["g", "https://example.org/2"])
    assert.match(ids[2]!, /^sha256:[0-9a-f]{32}$/)
    assert.notStrictEqual(ids[2], ids[3])
    assert.strictEqual(read(rss("<item><title>Same</title><pubDate>Mon, 01 Jan 2024 00:00:00 GMT</pubDate></item>")).entries[0]!.id, ids[2])
    // A guid that is a permalink is the URL when there is no link; `isPermaLink="false"` is not.
    assert.strictEqual(read(rss("<item><guid>https://example.org/p</guid></item>")).entries[0]!.url, "https://example.org/p")
    assert.strictEqual(read(rss("<item><guid isPermaLink=\"false\">https://example.org/p</guid></item>")).entries[0]!.url, null)
  })

  it("authors written as `email (Name)` give the name", () => {
    assert.strictEqual(read(rss("<item><author>jane@example.org (Jane Doe)</author></item>")).entries[0]!.author, "Jane Doe")
  })

  it("not a feed: an HTML page, garbage bytes, an empty body, an unknown root", () => {
    for (const body of ["<!doctype html><html><head><title>x</title></head><body>hi</body></html>", "\u0000\u0001%PDF-1.4 garbage", "", "<opml><body/></opml>"]) {
      assert.isUndefined(readFeed(decodeFeed(Buffer.from(body)), "https://example.org/"))
    }
    assert.isUndefined(readFeed(decodeFeed(Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919) % 256))), "https://example.org/"))
  })
})

describe("items of a feed", () => {
  it("dedups by id (first wins), falls back to the feed's date then the poll time, and to the site URL", () => {
    const now = new Date("2024-06-01T00:00:00Z")
    const dated = read(rss("<item><guid>a</guid><title>first</title></item><item><guid>a</guid><title>second</title></item>", "<title>T</title><link>https://example.org/</link><lastBuildDate>Sat, 01 Jun 2024 10:00:00 +0200</lastBuildDate>"))
    const items = feedItems(dated, "https://example.org/feed.xml", now)
    assert.strictEqual(items.length, 1)
    assert.deepStrictEqual(items[0], {
      module: "rss",
      id: "a",
      url: "https://example.org/",
      publishedAt: new Date("2024-06-01T08:00:00Z"),
      eventAt: new Date("2024-06-01T08:00:00Z"),
      title: "first",
      author: null,
      contentHtml: null,
      mediaUrl: null,
      categories: [],
      feedTitle: "T",
      siteUrl: "https://example.org/",
      feedUrl: "https://example.org/feed.xml",
      feedImage: null
    })
    const undated = feedItems(read(rss("<item><guid>b</guid></item>", "<title>T</title>")), "https://example.org/feed.xml", now)
    assert.deepStrictEqual([undated[0]!.publishedAt, undated[0]!.url], [now, "https://example.org/feed.xml"])
  })
})

describe("dates", () => {
  const cases: ReadonlyArray<readonly [string, string | null]> = [
    ["Wed, 03 Jan 2018 14:11:52 GMT", "2018-01-03T14:11:52.000Z"],
    ["Tue, 4 Sep 2018 10:00:00 -0300", "2018-09-04T13:00:00.000Z"],
    ["4 Sep 2018 10:00 +0530", "2018-09-04T04:30:00.000Z"],
    ["03 Apr 02 1500 GMT", "2002-04-03T15:00:00.000Z"],
    ["Mon, 16 Oct 2017 15:10:00 PDT", "2017-10-16T22:10:00.000Z"],
    ["Mon, 16 Oct 2017 15:10:00 EST", "2017-10-16T20:10:00.000Z"],
    ["Mon, 16 Oct 2017 15:10:00 GMT+2", "2017-10-16T13:10:00.000Z"],
    ["Mon, 16 Oct 2017 15:10:00", "2017-10-16T15:10:00.000Z"],
    ["Monday, 16 October 2017 15:10:00 +0000", "2017-10-16T15:10:00.000Z"],
    ["Di, 05 Mär 2024 08:00:00 +0100", "2024-03-05T07:00:00.000Z"],
    ["Seg, 24 Set 2018 19:42:40 -0300", "2018-09-24T22:42:40.000Z"],
    ["2024-03-01T10:00:00Z", "2024-03-01T10:00:00.000Z"],
    ["2024-03-01T10:00:00.250+01:00", "2024-03-01T09:00:00.250Z"],
    ["2024-03-01 10:00:00", "2024-03-01T10:00:00.000Z"],
    ["2024-03-01", "2024-03-01T00:00:00.000Z"],
    ["20240301T100000Z", "2024-03-01T10:00:00.000Z"],
    ["1518478934", null],
    ["not a date", null],
    ["", null]
  ]
  it.each(cases)("%s", (input, expected) => {
    assert.strictEqual(iso(parseFeedDate(input)), expected)
  })
})
