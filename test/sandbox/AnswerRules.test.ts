/** The platform's rules for answers to interactions (AnswerRules.ts), table by table, and the bots' keys. */
import { assert, describe, it } from "@effect/vitest"
import { createPublicKey, verify } from "node:crypto"
import { allowedCallbacks, answerProblems } from "../../src/sandbox/interactions/AnswerRules.ts"
import { publicKeyHex, signInteraction } from "../../src/sandbox/interactions/BotKeys.ts"
import { BOT1_ID, BOT2_ID } from "../../src/sandbox/Seed.ts"

const input = (custom_id: string, extra: Record<string, unknown> = {}) => ({ type: 4, custom_id, style: 1, ...extra })
const label = (text: string, component: unknown) => ({ type: 18, label: text, component })
const modal = (components: ReadonlyArray<unknown>, extra: Record<string, unknown> = {}) => ({
  type: 9,
  data: { custom_id: "m", title: "Form", components, ...extra }
})
const options = (n: number) => Array.from({ length: n }, (_, i) => ({ label: `o${i}`, value: `v${i}` }))

describe("answer rules", () => {
  it("callback types per interaction, as the documentation lists them", () => {
    const table: ReadonlyArray<readonly [1 | 2 | 3 | 5, boolean, ReadonlyArray<number>]> = [
      [1, false, [1]],
      [2, false, [4, 5, 9]],
      [3, true, [4, 5, 6, 7, 9]],
      [5, false, [4, 5]],
      [5, true, [4, 5, 6, 7]]
    ]
    for (const [type, fromMessage, allowed] of table) assert.deepStrictEqual(allowedCallbacks(type, fromMessage), allowed, `${type}`)
  })

  it("accepts what the platform accepts", () => {
    const accepted: ReadonlyArray<readonly [1 | 2 | 3 | 5, unknown]> = [
      [1, { type: 1 }],
      [2, { type: 4, data: { content: "hi", flags: 64 } }],
      [2, { type: 5, data: { flags: 64 } }],
      [2, modal([label("Name", input("n", { min_length: 1, max_length: 100 })), { type: 10, content: "Read this" }])],
      [2, modal(Array.from({ length: 5 }, (_, i) => label(`Q${i}`, input(`q${i}`))))],
      [3, { type: 6 }],
      [3, { type: 7, data: { content: "updated", components: [] } }],
      [3, modal([label("Pick", { type: 3, custom_id: "s", options: options(25) })])]
    ]
    for (const [type, answer] of accepted) assert.deepStrictEqual(answerProblems(type, type === 3, answer), [], JSON.stringify(answer))
  })

  it("names every problem of what it refuses", () => {
    const refused: ReadonlyArray<readonly [1 | 2 | 3 | 5, unknown, RegExp]> = [
      [1, { type: 4, data: { content: "x" } }, /not valid for PING/],
      [2, { type: 6 }, /not valid for APPLICATION_COMMAND/],
      [5, modal([label("a", input("a"))]), /not valid for MODAL_SUBMIT/],
      [2, "PONG", /not an interaction response/],
      [2, { type: 4, data: {} }, /empty message/],
      [2, { type: 4, data: { content: "x".repeat(2001) } }, /content: longer than 2000/],
      [2, { type: 5, data: { flags: 4 } }, /only set EPHEMERAL/],
      [2, modal([]), /between 1 and 5 components, got 0/],
      [2, modal(Array.from({ length: 6 }, (_, i) => label(`Q${i}`, input(`q${i}`)))), /between 1 and 5 components, got 6/],
      [2, modal([label("a", input("a"))], { title: "x".repeat(46) }), /title: longer than 45/],
      [2, modal([label("a", input("a"))], { custom_id: "x".repeat(101) }), /custom_id: longer than 100/],
      [2, modal([label("a".repeat(46), input("a"))]), /label: longer than 45/],
      [2, modal([{ type: 18, label: "a", description: "d".repeat(101), component: input("a") }]), /description: longer than 100/],
      [2, modal([label("a", input("a", { max_length: 4001 }))]), /max_length: above maximum/],
      [2, modal([label("a", input("a", { value: "v".repeat(4001) }))]), /value: longer than 4000/],
      [2, modal([label("a", input("a", { min_length: 10, max_length: 5 }))]), /min_length 10 is above max_length 5/],
      [2, modal([label("a", input("x")), label("b", input("x"))]), /used twice/],
      [2, modal([label("a", { type: 3, custom_id: "s", options: options(26) })]), /options: more than 25 items/],
      [2, modal([label("a", { type: 3, custom_id: "s", options: [] })]), /options: fewer than 1 items/],
      [2, modal([label("a", { type: 3, custom_id: "s", options: options(2), max_values: 3 })]), /above its 2 options/],
      [2, modal([{ type: 10, content: "" }]), /content: shorter than 1/]
    ]
    for (const [type, answer, expected] of refused) {
      assert.match(answerProblems(type, false, answer).join("\n"), expected, JSON.stringify(answer).slice(0, 120))
    }
  })
})

describe("bot keys", () => {
  it("are fixed per bot, distinct, and verify with node:crypto", () => {
    assert.strictEqual(publicKeyHex(BOT1_ID), publicKeyHex(BOT1_ID))
    assert.notStrictEqual(publicKeyHex(BOT1_ID), publicKeyHex(BOT2_ID))
    const key = createPublicKey({ key: Buffer.concat([Buffer.from("302a300506032b6570032100", "hex"), Buffer.from(publicKeyHex(BOT1_ID), "hex")]), format: "der", type: "spki" })
    const signature = Buffer.from(signInteraction(BOT1_ID, "1700000000", "{\"type\":1}"), "hex")
    assert.strictEqual(signature.length, 64)
    assert.isTrue(verify(null, Buffer.from("1700000000{\"type\":1}"), key, signature))
    assert.isFalse(verify(null, Buffer.from("1700000001{\"type\":1}"), key, signature))
  })
})
