/** Discord's response schemas (test/fixtures/discord/openapi-subset.json), for the sandbox's answers. */
import { assert } from "@effect/vitest"
import { readFileSync } from "node:fs"
import type { SchemaDocument } from "../../src/sandbox/DiscordSchemaCheck.ts"
import { checkSchema } from "../../src/sandbox/DiscordSchemaCheck.ts"

const doc = JSON.parse(readFileSync(new URL("../fixtures/discord/openapi-subset.json", import.meta.url), "utf8")) as SchemaDocument

/** Fails with every problem when `value` is not what openapi.json's `schema` describes. */
export const assertShape = (schema: string, value: unknown) => assert.deepStrictEqual(checkSchema(doc, schema, value), [], schema)
