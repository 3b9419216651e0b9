/**
 * What a request's fiber starts with (http/server/Server.ts `requestContext`, issue #16): the server's
 * context without the gateway's own services, which HttpApiBuilder used to copy into a new map on
 * every request. Asserted here over real HTTP with `serve`: a plain route's request holds no gateway
 * service but every Reference the app provided (not its default), an HttpApi handler's request still
 * holds its group's services (HttpApiBuilder puts the group's build context back), and the type checker
 * refuses a route, plain or HttpApi, that would need a service at request time.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer, Schema } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { requestContext, requestReferences, serve } from "../../src/http/server/Server.ts"
import { freePort } from "../utils/FreePort.ts"
import { DependencyHealth, makeDependencyHealth } from "../../src/services/infra/DependencyHealth.ts"

class Probe extends Context.Service<Probe, { readonly name: string }>()("gateway/RequestContextProbe") {}

class ProbeGroup extends HttpApiGroup.make("probe").add(HttpApiEndpoint.get("who", "/probe/who", { success: Schema.String })) {}
const ProbeApi = HttpApi.make("probe").add(ProbeGroup)

// As the gateway's groups do: the service taken when the group is built. At request time the
// handler says whether its request holds Probe too (an untyped read, as `serviceOption` is).
const ProbeHandlers = HttpApiBuilder.group(ProbeApi, "probe", (handlers) =>
  Effect.map(Effect.service(Probe), (probe) =>
    handlers.handle("who", () =>
      Effect.map(Effect.serviceOption(Probe), (held) => `${probe.name}; held at request time: ${held._tag}`))))

const health = makeDependencyHealth()

// A plain route: what its request's context holds.
const keysRoute = HttpRouter.add("GET", "/probe/keys", Effect.withFiber((fiber) =>
  Effect.succeed(HttpServerResponse.jsonUnsafe({
    keys: [...fiber.context.mapUnsafe.keys()],
    probe: fiber.context.mapUnsafe.has(Probe.key),
    ownHealth: fiber.getRef(DependencyHealth) === health
  }))))

const routes = Layer.mergeAll(
  HttpApiBuilder.layer(ProbeApi).pipe(Layer.provide(ProbeHandlers)),
  keysRoute
)

const start = Effect.gen(function*() {
  const port = yield* Effect.promise(freePort)
  yield* Layer.build(serve(routes, { port, host: "127.0.0.1" }).pipe(
    Layer.provide(Layer.succeed(Probe, { name: "probe-at-build" })),
    Layer.provide(Layer.succeed(DependencyHealth, health))
  ))
  return `http://127.0.0.1:${port}`
})

const get = (url: string) => Effect.promise(() => fetch(url).then(async (r) => ({ status: r.status, body: await r.json() as unknown })))

describe("the request context", () => {
  it.live("a plain route's request holds no gateway service but keeps the provided References; an HttpApi request holds its group's services", () =>
    Effect.scoped(Effect.gen(function*() {
      const base = yield* start
      const who = yield* get(`${base}/probe/who`)
      assert.deepStrictEqual(who, { status: 200, body: "probe-at-build; held at request time: Some" })
      const keys = yield* get(`${base}/probe/keys`)
      assert.strictEqual(keys.status, 200)
      const body = keys.body as { keys: Array<string>; probe: boolean; ownHealth: boolean }
      assert.isFalse(body.probe)
      assert.notInclude(body.keys, "gateway/RequestContextProbe")
      assert.include(body.keys, "gateway/DependencyHealth")
      assert.include(body.keys, "effect/http/HttpServerRequest")
      assert.isTrue(body.ownHealth, "the request reads the DependencyHealth the app provided, not the default")
      assert.deepStrictEqual(body.keys.filter((k) => k.startsWith("gateway/") && !requestReferences.has(k)), [])
    })))

  it("requestContext keeps effect's entries and the gateway's References, drops the gateway's services", () => {
    const context = Context.makeUnsafe<never>(new Map<string, unknown>([
      ["effect/http/HttpServer", 1],
      ["~effect/Stdio", 2],
      ["@effect/sql-pg/PgClient", 3],
      ["gateway/Forms", 4],
      ["gateway/DependencyHealth", 5],
      ["gateway/ServerLimits", 6]
    ]))
    assert.deepStrictEqual(
      [...requestContext(context).mapUnsafe.entries()],
      [["effect/http/HttpServer", 1], ["~effect/Stdio", 2], ["@effect/sql-pg/PgClient", 3], ["gateway/DependencyHealth", 5], ["gateway/ServerLimits", 6]]
    )
  })

  it("every Context.Reference declared in src/ is kept on requests (listed in requestReferences)", () => {
    const files = (dir: string): Array<string> =>
      readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
        e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : []
      )
    const declared = new Set<string>()
    for (const file of files(join(import.meta.dirname, "../../src"))) {
      for (const m of readFileSync(file, "utf8").matchAll(/Context\.Reference(?:<[^(]*>)?\(\s*"([^"]+)"/g)) declared.add(m[1]!)
    }
    assert.isAtLeast(declared.size, 7)
    assert.deepStrictEqual([...declared].sort(), [...requestReferences].sort())
  })

  it("the type checker refuses a route, plain or HttpApi, that needs a service at request time", () => {
    const plain = HttpRouter.add("GET", "/probe/needs", Effect.map(Effect.service(Probe), (p) => HttpServerResponse.text(p.name)))
    const api = HttpApiBuilder.layer(ProbeApi).pipe(Layer.provide(HttpApiBuilder.group(ProbeApi, "probe", (handlers) =>
      handlers.handle("who", () => Effect.map(Effect.service(Probe), (p) => p.name)))))
    // @ts-expect-error Probe would be missing from the request's context
    const refusedPlain = () => serve(plain, { port: 0, host: "127.0.0.1" })
    // @ts-expect-error the same for a handler that reads it when the request runs
    const refusedApi = () => serve(api, { port: 0, host: "127.0.0.1" })
    assert.isFunction(refusedPlain)
    assert.isFunction(refusedApi)
  })
})
