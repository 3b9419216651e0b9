/**
 * What someone deploying the gateway meets: the Dockerfile, compose.yaml, .env.example, LICENSE,
 * CHANGELOG and the version. Always checked structurally (compose.yaml parsed with Effect's YAML
 * parser; the Dockerfile's stages, user, health check and copied paths; every variable the code
 * reads listed in .env.example). When a Docker engine answers (`docker info`), the image is also
 * built, inspected, run and asked for /healthz; otherwise that test says why it is skipped.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Yaml from "effect/encoding/Yaml"
import { execFileSync, spawnSync } from "node:child_process"
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import { join, relative, resolve } from "node:path"
import { freePort } from "../utils/FreePort.ts"
import { SOURCE_ENV } from "../../src/layers/sources/ExternalSourcesHttp.ts"
import { nodeFlags } from "../../scripts/node-flags.mjs"

const ROOT = resolve(import.meta.dirname, "../..")
const read = (file: string) => readFileSync(join(ROOT, file), "utf8")
const root = JSON.parse(read("package.json")) as { version: string; engines: { node: string }; scripts: { start: string; dev: string } }

// ---------------------------------------------------------------------------------------------
// What the code reads and what .env.example lists
// ---------------------------------------------------------------------------------------------

const walk = (dir: string): Array<string> =>
  readdirSync(dir).flatMap((f) => {
    const p = join(dir, f)
    return statSync(p).isDirectory() ? walk(p) : p.endsWith(".ts") ? [p] : []
  })

/** Environment variables named in src: Config readers, the config helpers, process.env, the sources' list. */
const variablesReadByTheCode = (): Map<string, string> => {
  const found = new Map<string, string>()
  const add = (name: string, file: string) => {
    if (!found.has(name)) found.set(name, relative(ROOT, file))
  }
  for (const file of walk(join(ROOT, "src"))) {
    const text = readFileSync(file, "utf8").replace(/^\s*(\*|\/\/).*$/gm, "") // not the comments
    for (const m of text.matchAll(/process\.env(?:\.([A-Z][A-Z0-9_]*)|\[\s*"([A-Z][A-Z0-9_]*)"\s*\])/g)) add((m[1] ?? m[2])!, file)
    for (const m of text.matchAll(/\bConfig\.[A-Za-z]+\(\s*"([A-Z][A-Z0-9_]*)"/g)) add(m[1]!, file)
    for (const m of text.matchAll(/\bConfig\.Literals\(\s*\[[^\]]*\],\s*"([A-Z][A-Z0-9_]*)"/g)) add(m[1]!, file)
    // The configuration modules read through small helpers: positiveInt("FEED_…", 24), optional("…").
    if (/src\/layers\/(config|sources)\//.test(file)) {
      for (const m of text.matchAll(/\b[a-z][A-Za-z]*\(\s*"([A-Z][A-Z0-9]*_[A-Z0-9_]+|PORT|HOST|ROLE|SANDBOX|MAINTENANCE)"/g)) add(m[1]!, file)
    }
  }
  for (const names of Object.values(SOURCE_ENV)) for (const name of names) add(name, "src/layers/sources/ExternalSourcesHttp.ts")
  return found
}

/** `# NAME=default` or `NAME=value` lines. */
const envExample = () => {
  const names = [...read(".env.example").matchAll(/^#?\s?([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]!)
  return { names, set: new Set(names) }
}

describe(".env.example", () => {
  it("lists every variable the code reads, each once, all commented out (copying it changes nothing)", () => {
    const { names, set } = envExample()
    const inCode = variablesReadByTheCode()
    assert.isAbove(inCode.size, 40, "the scan finds the configuration")
    const missing = [...inCode].filter(([name]) => !set.has(name)).map(([name, file]) => `${name} (${file})`)
    assert.deepStrictEqual(missing, [], "read by the code but missing from .env.example")
    assert.deepStrictEqual(names.filter((n, i) => names.indexOf(n) !== i), [], "listed twice")
    const active = read(".env.example").split("\n").filter((l) => /^[A-Z][A-Z0-9_]*=/.test(l))
    assert.deepStrictEqual(active, [], "every line is a commented default")
    for (const m of ["PHOTO", "FORUM", "RSS", "STREAMING", "MICROBLOG", "VIDEO"]) assert.isTrue(set.has(`FEED_POLL_INTERVAL_SECONDS_${m}`), m)
  })

  it("names every variable of the README's configuration table", () => {
    const { set } = envExample()
    const documented = [...read("README.md").matchAll(/^\| (`[A-Z][A-Z0-9_]*`(?:, `[A-Z][A-Z0-9_]*`)*) \|/gm)]
      .flatMap((m) => [...m[1]!.matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((n) => n[1]!))
    assert.isAbove(documented.length, 20)
    assert.deepStrictEqual(documented.filter((n) => !set.has(n)), [])
  })
})

// ---------------------------------------------------------------------------------------------
// compose.yaml
// ---------------------------------------------------------------------------------------------

interface Service {
  readonly build?: unknown
  readonly image?: string
  readonly environment?: Record<string, string>
  readonly ports?: ReadonlyArray<string>
  readonly depends_on?: Record<string, { readonly condition?: string }>
  readonly healthcheck?: { readonly test?: ReadonlyArray<string> | string }
  readonly command?: unknown
}

describe("compose.yaml", () => {
  const compose = Yaml.parse(read("compose.yaml")) as { services: Record<string, Service>; volumes?: Record<string, unknown> }

  it("starts the gateway after healthy PostgreSQL and Redis, every service with a health check", () => {
    const { gateway, postgres, redis } = compose.services
    assert.isDefined(gateway)
    assert.isDefined(postgres)
    assert.isDefined(redis)
    assert.isDefined(gateway!.build, "the gateway is built from this repository's Dockerfile")
    assert.deepStrictEqual(gateway!.depends_on, { postgres: { condition: "service_healthy" }, redis: { condition: "service_healthy" } })
    for (const [name, service] of Object.entries(compose.services)) {
      const test = service.healthcheck?.test
      assert.isTrue(test !== undefined && test.length > 0, `${name} has a health check`)
    }
    assert.include(JSON.stringify(gateway!.healthcheck!.test), "/healthz")
    assert.match(JSON.stringify(postgres!.healthcheck!.test), /pg_isready/)
    assert.match(JSON.stringify(redis!.healthcheck!.test), /redis-cli.*ping/)
    assert.match(postgres!.image ?? "", /^postgres:\d+/)
    assert.match(redis!.image ?? "", /^redis:\d+/)
  })

  it("points the gateway at the compose services, with names .env.example lists", () => {
    const { gateway, postgres } = compose.services
    const env = gateway!.environment!
    const { set } = envExample()
    for (const name of Object.keys(env)) assert.isTrue(set.has(name), `${name} is in .env.example`)
    const db = new URL(env.DATABASE_URL!.replace(/\$\{POSTGRES_PASSWORD:-([^}]*)\}/, "$1"))
    const pgEnv = postgres!.environment!
    assert.strictEqual(db.hostname, "postgres")
    assert.strictEqual(db.username, pgEnv.POSTGRES_USER)
    assert.strictEqual(db.pathname, `/${pgEnv.POSTGRES_DB}`)
    assert.strictEqual(new URL(env.REDIS_URL!).hostname, "redis")
    assert.strictEqual(env.HOST, "0.0.0.0", "reachable through the published port")
    // Published on this machine's loopback unless GATEWAY_BIND says otherwise (sandbox mode is on by default).
    assert.deepStrictEqual(gateway!.ports, ["${GATEWAY_BIND:-127.0.0.1}:8080:8080"])
    assert.strictEqual(env.PORT, "8080")
    // Interpolated variables of compose.yaml itself are documented too.
    const interpolated = [...read("compose.yaml").matchAll(/\$\{([A-Z][A-Z0-9_]*)/g)].map((m) => m[1]!)
    for (const name of interpolated) assert.isTrue(set.has(name), `\${${name}} is in .env.example`)
  })
})

// ---------------------------------------------------------------------------------------------
// Dockerfile
// ---------------------------------------------------------------------------------------------

/** Instructions with continuation lines joined, comments dropped. */
const instructions = () =>
  read("Dockerfile").replace(/\\\n/g, " ").split("\n").map((l) => l.trim()).filter((l) => l.length > 0 && !l.startsWith("#"))
    .map((l) => {
      const [op, ...rest] = l.split(/\s+/)
      return { op: op!.toUpperCase(), args: rest.join(" ") }
    })

describe("Dockerfile", () => {
  it("is multi-stage; the final stage runs as a non-root user with a health check on /healthz", () => {
    const all = instructions()
    const froms = all.map((i, index) => ({ ...i, index })).filter((i) => i.op === "FROM")
    assert.isAtLeast(froms.length, 2, "multi-stage")
    const finalStage = all.slice(froms.at(-1)!.index)
    const user = finalStage.filter((i) => i.op === "USER").at(-1)
    assert.isDefined(user, "USER in the final stage")
    assert.notMatch(user!.args, /^(root|0)(:|$)/)
    const health = finalStage.find((i) => i.op === "HEALTHCHECK")
    assert.isDefined(health)
    assert.include(health!.args, "/healthz")
    const cmd = finalStage.find((i) => i.op === "CMD")
    assert.include(cmd!.args, "dist/main.mjs")
    // The V8 flags of `npm start`, so the image runs what the benchmarks measured.
    // (read by the benchmarks' own parser of the start script, so the three cannot drift apart)
    assert.isNotEmpty(nodeFlags)
    assert.deepStrictEqual(JSON.parse(cmd!.args), ["node", ...nodeFlags, "dist/main.mjs"])
    assert.isTrue(finalStage.some((i) => i.op === "EXPOSE" && i.args === "8080"))
    assert.isFalse(finalStage.some((i) => i.op === "COPY" && /\bsrc\b/.test(i.args) && !i.args.includes("--from")), "no sources in the runtime image")
    // The Node of the image satisfies the engines field.
    const node = /^ARG NODE_VERSION=(\d+)/m.exec(read("Dockerfile"))?.[1]
    assert.isAtLeast(Number(node), Number(/\d+/.exec(root.engines.node)![0]))
  })

  it("npm run dev has the start flags, and this Node accepts every one of them", () => {
    // dev = start + source maps: a flag added to one script only would make the two measure differently.
    const dev = /\bexec node((?: --[\w-]+(?:=\S+)?)*) dist\/main\.mjs\b/.exec(root.scripts.dev)
    assert.isNotNull(dev, "dev is `... exec node [flags] dist/main.mjs`")
    assert.deepStrictEqual(dev![1].split(" ").filter((f) => f !== "" && f !== "--enable-source-maps"), [...nodeFlags])
    // Node exits 9 ("bad option") on a V8 flag its V8 does not have (Node 20 has no --minor-ms, for
    // one): the suite runs on Node 20 and 24, so a flag of only one of them fails here, not at start.
    const run = spawnSync(process.execPath, [...nodeFlags, "-e", "process.stdout.write('ok')"], { encoding: "utf8" })
    assert.strictEqual(run.stderr, "")
    assert.strictEqual(run.status, 0)
    assert.strictEqual(run.stdout, "ok")
  })

  it("copies only paths that exist and that .dockerignore lets through", () => {
    const ignored = read(".dockerignore").split("\n").map((l) => l.trim()).filter((l) => l.length > 0 && !l.startsWith("#") && !l.startsWith("!"))
    for (const { args, op } of instructions()) {
      if (op !== "COPY" || args.includes("--from")) continue
      const sources = args.split(/\s+/).filter((a) => !a.startsWith("--")).slice(0, -1)
      for (const source of sources) {
        assert.isTrue(existsSync(join(ROOT, source)), `COPY ${source}: exists`)
        assert.isFalse(ignored.some((p) => p === source || source.startsWith(`${p}/`)), `COPY ${source}: not in .dockerignore`)
      }
    }
  })

  it("builds an image whose user is not root, runs it and gets 200 from /healthz (when a Docker engine answers)", async (ctx) => {
    const info = spawnSync("docker", ["info", "--format", "{{.ServerVersion}}"], { encoding: "utf8", timeout: 20_000 })
    if (info.status !== 0) {
      // Said in the skip's note (the reporter shows it), not as a warning on stderr.
      return ctx.skip(`no Docker engine here, the image build is skipped (${(info.stderr || String(info.error)).trim().split("\n").at(-1)})`)
    }
    const tag = `bot-module-gateway:test-${process.pid}`
    const name = `bot-module-gateway-test-${process.pid}`
    // IMAGE_NODE_VERSION picks another node:<n>-bookworm-slim base (a machine that has only that one).
    const nodeVersion = process.env.IMAGE_NODE_VERSION
    try {
      execFileSync("docker", ["build", ...(nodeVersion ? ["--build-arg", `NODE_VERSION=${nodeVersion}`] : []), "-t", tag, "."], {
        cwd: ROOT,
        stdio: "pipe",
        timeout: 900_000
      })
      const [config] = JSON.parse(execFileSync("docker", ["image", "inspect", tag], { encoding: "utf8" })) as Array<{
        Config: { User: string; Healthcheck?: { Test: Array<string> } }
      }>
      assert.notMatch(config!.Config.User, /^(|root|0)$/)
      assert.include(config!.Config.Healthcheck!.Test.join(" "), "/healthz")
      // Run it as a user would (sandbox mode, embedded database in its volume) and ask /healthz.
      const port = await freePort()
      execFileSync("docker", ["run", "-d", "--name", name, "-p", `127.0.0.1:${port}:8080`, "-e", "SANDBOX=true", tag], { stdio: "pipe" })
      const deadline = Date.now() + 120_000
      let status = 0
      while (status !== 200 && Date.now() < deadline) {
        // A time-out per try: the published port accepts connections before the server listens.
        status = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(2000) }).then((r) => r.status, () => 0)
        if (status !== 200) await new Promise((r) => setTimeout(r, 1000))
      }
      assert.strictEqual(status, 200, execFileSync("docker", ["logs", name], { encoding: "utf8" }).slice(-2000))
      const uid = execFileSync("docker", ["exec", name, "id", "-u"], { encoding: "utf8" }).trim()
      assert.notStrictEqual(uid, "0", "the server does not run as root")
    } finally {
      spawnSync("docker", ["rm", "-f", name])
      spawnSync("docker", ["image", "rm", "-f", tag])
    }
  }, 900_000)
})

// ---------------------------------------------------------------------------------------------
// LICENSE, CHANGELOG, the version
// ---------------------------------------------------------------------------------------------

describe("license, changelog and version", () => {
  it("LICENSE is MIT, like the client package", () => {
    assert.match(read("LICENSE"), /^MIT License\n/)
    assert.strictEqual(JSON.parse(read("packages/client/package.json")).license, "MIT")
  })

  it("CHANGELOG follows Keep a Changelog: Unreleased first, then the current version", () => {
    const headings = [...read("CHANGELOG.md").matchAll(/^## \[([^\]]+)\](?: - (\d{4}-\d{2}-\d{2}))?$/gm)].map((m) => m[1]!)
    assert.strictEqual(headings[0], "Unreleased")
    assert.include(headings, root.version, "the package's version has its section")
    for (const m of read("CHANGELOG.md").matchAll(/^### (.+)$/gm)) {
      assert.include(["Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"], m[1]!)
    }
  })

  it("the version is written only in the root package.json", () => {
    const client = JSON.parse(read("packages/client/package.json")) as { version?: string; dependencies: Record<string, string> }
    assert.isUndefined(client.version, "the client's version comes from the root at build time")
    assert.notMatch(read("src/cli.ts"), new RegExp(`"${root.version.replace(/\./g, "\\.")}"`))
    assert.notInclude(read("Dockerfile"), root.version)
    assert.notInclude(read("compose.yaml"), root.version)
    const pkgRoot = JSON.parse(read("package.json")) as { dependencies: Record<string, string> }
    assert.deepStrictEqual(client.dependencies, { effect: pkgRoot.dependencies.effect }, "the client pins effect like the root")
  })
})
