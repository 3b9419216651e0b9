/** How the walkthrough test reads the README (ReadmeWalkthroughFixtures.ts): commands, their `# →` lines, and the matching of `…`. */
import { assert, describe, it } from "@effect/vitest"
import { blockSteps, matchesShown, section, shBlocks } from "./ReadmeWalkthroughFixtures.ts"

describe("blockSteps", () => {
  it("joins backslash continuations and quotes left open, and attaches each # → (with its continuation lines)", () => {
    const block = [
      "A=1",
      "curl -s \\",
      "  $A   # a remark, not an answer",
      "# → {\"x\":1,",
      "#    \"y\":2}",
      "# a plain comment",
      "curl -d '{\"a\":1,",
      "  \"b\":2}' $A",
      "# → ok",
      ""
    ].join("\n")
    assert.deepStrictEqual(blockSteps(block), [
      { command: "A=1" },
      { command: "curl -s \\\n  $A   # a remark, not an answer", shown: "{\"x\":1,\"y\":2}" },
      { command: "curl -d '{\"a\":1,\n  \"b\":2}' $A", shown: "ok" }
    ])
  })

  it("keeps a function's body (name() { … }) as one command; a one-line function stays one line", () => {
    const block = "signin() {\n  local a\n  curl -s \"$1\"\n}\nTOKEN=$(signin x)\nbutton() { jq -r .id; }\necho ok\n# → ok\n"
    assert.deepStrictEqual(blockSteps(block), [
      { command: "signin() {\n  local a\n  curl -s \"$1\"\n}" },
      { command: "TOKEN=$(signin x)" },
      { command: "button() { jq -r .id; }" },
      { command: "echo ok", shown: "ok" }
    ])
  })

  it("refuses a # → that follows no command", () => {
    assert.throws(() => blockSteps("# → nothing\n"), /follows no command/)
  })

  it("takes the sh blocks of one section only", () => {
    const md = "# T\n\n## A\n\n```sh\none\n```\n\n## B\n\n```sh\ntwo\n```\n\n```ts\nthree\n```\n"
    assert.deepStrictEqual(shBlocks(section(md, "B")), ["two\n"])
    assert.throws(() => section(md, "C"), /no section/)
  })
})

describe("matchesShown", () => {
  const cases: ReadonlyArray<readonly [string, string, boolean]> = [
    ["{\"success\":true}", "{\"success\":true}", true],
    ["{\"success\":true}", "{\"success\":false}", false],
    ["{\"state\":\"active\",…,\"delivered\":1,…}", "{\"state\":\"active\",\"reason\":null,\"delivered\":1,\"skipped\":0}", true],
    ["{\"state\":\"active\",…,\"delivered\":1,…}", "{\"state\":\"active\",\"reason\":null,\"delivered\":0,\"skipped\":1}", false],
    // anchored at both ends unless … says otherwise
    ["{\"ok\":true}", "x{\"ok\":true}", false],
    ["{\"ok\":true}", "{\"ok\":true}x", false],
    ["…\"ok\":true…", "x{\"ok\":true}x", true],
    // pieces in order
    ["{…\"b\":2,…\"a\":1…", "{\"a\":1,\"b\":2}", false],
    ["", "", true]
  ]
  for (const [shown, output, expected] of cases) {
    it(`${JSON.stringify(shown)} against ${JSON.stringify(output)}: ${expected}`, () => {
      assert.strictEqual(matchesShown(shown, output), expected)
    })
  }
})
