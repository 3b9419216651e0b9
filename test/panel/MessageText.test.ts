/**
 * How the panel reads a message (src/panel/message/markdown.ts, messageText.ts): the platform's
 * Markdown basics as nodes (hostile text stays text; only http(s) becomes a link), role names, a
 * forum post's tag names, who a message pings, the embed's colour.
 */
import { describe, expect, it } from "@effect/vitest"
import type { MdNode } from "../../src/panel/message/markdown.ts"
import { parseMarkdown } from "../../src/panel/message/markdown.ts"
import { barColour, pingsOf, roleName, tagNames } from "../../src/panel/message/messageText.ts"

const text = (t: string): MdNode => ({ kind: "text", text: t })

describe("parseMarkdown", () => {
  const rows: ReadonlyArray<readonly [string, string, ReadonlyArray<MdNode>]> = [
    ["plain text", "Hello world", [text("Hello world")]],
    ["bold, italics, underline, strikethrough", "**b** *i* _j_ __u__ ~~s~~", [
      { kind: "strong", children: [text("b")] }, text(" "),
      { kind: "em", children: [text("i")] }, text(" "),
      { kind: "em", children: [text("j")] }, text(" "),
      { kind: "u", children: [text("u")] }, text(" "),
      { kind: "s", children: [text("s")] }
    ]],
    ["bold italics", "***both***", [{ kind: "strong", children: [{ kind: "em", children: [text("both")] }] }]],
    ["an underscore inside a word is not italics", "snake_case_name", [text("snake_case_name")]],
    ["an unclosed star stays", "2 * 3 = 6", [text("2 * 3 = 6")]],
    ["line breaks", "a\nb", [text("a"), { kind: "br" }, text("b")]],
    ["a masked link", "[the post](https://example.com/p)", [{ kind: "link", href: "https://example.com/p", children: [text("the post")] }]],
    ["a bare URL, without the full stop after it", "See https://example.com/a.", [
      text("See "), { kind: "link", href: "https://example.com/a", children: [text("https://example.com/a")] }, text(".")
    ]],
    ["a javascript: link is not a link", "[x](javascript:alert(1))", [text("[x](javascript:alert(1))")]],
    ["a role mention", "<@&123> hi", [{ kind: "role", id: "123" }, text(" hi")]],
    ["user and channel mentions, @everyone and @here: as written", "<@42> <@!43> <#44> @everyone @here", [
      { kind: "mention", text: "<@42>" }, text(" "), { kind: "mention", text: "<@!43>" }, text(" "),
      { kind: "mention", text: "<#44>" }, text(" "), { kind: "mention", text: "@everyone" }, text(" "),
      { kind: "mention", text: "@here" }
    ]],
    ["an e-mail address is not a mention", "me@everyoneelse.org", [text("me@everyoneelse.org")]],
    ["HTML is text", "<script>alert(1)</script><img src=x onerror=alert(2)>", [text("<script>alert(1)</script><img src=x onerror=alert(2)>")]],
    ["inline code keeps its Markdown", "`**not bold**`", [{ kind: "code", text: "**not bold**" }]],
    ["a code block", "```js\nlet a = 1\n```", [{ kind: "codeblock", text: "let a = 1" }]],
    ["a heading and a quote at the start of lines", "# Title\n> said", [
      { kind: "heading", level: 1, children: [text("Title")] }, { kind: "quote", children: [text("said")] }
    ]],
    ["no heading inside a line", "a # b", [text("a # b")]],
    ["an escaped star", "\\*not italics\\*", [text("*"), text("not italics"), text("*")]]
  ]
  for (const [name, input, expected] of rows) {
    it(name, () => expect(parseMarkdown(input)).toEqual(expected))
  }

  it("deep nesting stops at a depth and stays text", () => {
    const deep = "**".repeat(40) + "x" + "**".repeat(40)
    const depth = (list: ReadonlyArray<MdNode>): number => Math.max(0, ...list.map((n) => ("children" in n ? 1 + depth(n.children) : 0)))
    const nodes = parseMarkdown(deep)
    expect(JSON.stringify(nodes)).toContain("x")
    expect(depth(nodes)).toBeLessThanOrEqual(7)
  })

  it("a long hostile text is read in linear-ish time", () => {
    const hostile = "*_~`[<@".repeat(700)
    const started = performance.now()
    parseMarkdown(hostile)
    expect(performance.now() - started).toBeLessThan(2000)
  })
})

describe("the words around a message", () => {
  const roles = [
    { id: "1", name: "@everyone", color_hex: "#000000" },
    { id: "2", name: "Moderators", color_hex: "#e74c3c" }
  ]
  it("role names: without the @, unknown-role for one the server lacks", () => {
    expect([roleName(roles, "2"), roleName(roles, "1"), roleName(roles, "9")]).toEqual(["Moderators", "everyone", "unknown-role"])
  })
  it("tag names: every name applied, else how many of which names", () => {
    expect(tagNames(["t1", "t2"], ["News", "Tech"])).toEqual(["News", "Tech"])
    expect(tagNames(["t1", "t2"], ["News", "news", "Tech"])).toEqual(["News", "Tech"])
    expect(tagNames(["t1"], ["News", "Nope"])).toEqual(["1 tag of: News, Nope"])
  })
  it("who a message pings", () => {
    const m = (allowed: { parse: ReadonlyArray<string>; roles?: ReadonlyArray<string> }) =>
      ({ content: "", username: null, avatar_url: null, allowed_mentions: allowed })
    expect(pingsOf(m({ parse: [] }), roles)).toBe("Pings no one: mentions in the text are shown, but notify nobody.")
    expect(pingsOf(m({ parse: [], roles: ["2", "9"] }), roles)).toBe("Pings @Moderators, @unknown-role; other mentions in the text notify nobody.")
  })
  it("the embed's colour", () => {
    expect([barColour(0xe91e63), barColour(0x00ff), barColour(undefined), barColour(-1), barColour(0x1000000)])
      .toEqual(["#e91e63", "#0000ff", undefined, undefined, undefined])
  })
})
