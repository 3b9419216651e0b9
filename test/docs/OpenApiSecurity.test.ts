/**
 * The OpenAPI document declares every header form of an `/api` access token as a security scheme
 * (issue #31), so a validating proxy in front of the gateway admits each form the server accepts;
 * and each declared form is one the token parser reads (domain/auth/AccessToken.ts).
 */
import { assert, describe, it } from "@effect/vitest"
import { OpenApi } from "effect/http-api"
import { accessTokensFrom } from "../../src/domain/auth/AccessToken.ts"
import { documentedApi } from "../../src/http/contract/OpenApiDocument.ts"

interface Scheme {
  readonly type: string
  readonly scheme?: string
  readonly name?: string
  readonly in?: string
}

const spec = OpenApi.fromApi(documentedApi("http://127.0.0.1:8080")) as unknown as {
  readonly components: { readonly securitySchemes: Record<string, Scheme> }
  readonly paths: Record<string, Record<string, { readonly security?: ReadonlyArray<Record<string, ReadonlyArray<string>>> }>>
}

const API_FORMS = ["bearer", "authorizationBare", "accessToken", "accessTokenBearer"]

/** The header a client sends for `scheme`, with the value spelled as its form says. */
const headerOf = (name: string, scheme: Scheme, token: string): Record<string, string> =>
  scheme.type === "http"
    ? { authorization: `Bearer ${token}` }
    : { [scheme.name!.toLowerCase()]: name.endsWith("Bearer") ? `Bearer ${token}` : token }

describe("OpenAPI security schemes", () => {
  it("the four header forms of an access token are declared, each on every /api operation", () => {
    const schemes = spec.components.securitySchemes
    assert.deepStrictEqual(schemes["bearer"], { ...schemes["bearer"]!, type: "http", scheme: "bearer" })
    assert.deepStrictEqual(
      [schemes["authorizationBare"], schemes["accessToken"], schemes["accessTokenBearer"]].map((s) => [s?.type, s?.in, s?.name]),
      [["apiKey", "header", "Authorization"], ["apiKey", "header", "X-Access-Token"], ["apiKey", "header", "X-Access-Token"]]
    )
    const apiOperations = Object.entries(spec.paths).filter(([path]) => path.startsWith("/api/")).flatMap(([, item]) => Object.values(item))
    assert.isAbove(apiOperations.length, 10)
    for (const op of apiOperations) {
      assert.deepStrictEqual(op.security?.map((s) => Object.keys(s)[0]), API_FORMS)
    }
  })

  it("each declared form is one the gateway reads the token from", () => {
    for (const name of API_FORMS) {
      const scheme = spec.components.securitySchemes[name]!
      assert.deepStrictEqual(accessTokensFrom(headerOf(name, scheme, "t0k3n")), ["t0k3n"], name)
    }
  })

  it("the /auth token routes keep their own scheme", () => {
    assert.deepStrictEqual(spec.paths["/auth/idp/token/check"]?.["post"]?.security, [{ authToken: [] }])
  })
})
