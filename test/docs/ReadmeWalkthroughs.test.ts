/**
 * The README's walkthroughs, run the way a newcomer runs them: every ```sh block of "Try it in the
 * sandbox", in order, pasted into one bash session against a fresh gateway (the production bundle in
 * sandbox mode, embedded database, a free port). Only two lines are changed: `GATEWAY=` (the port)
 * and `CODE=` (the temporary token). The token is obtained as a person's browser obtains it: the
 * sign-in URL the README gives, the sandbox's sign-in page, the "Sign in as Alice" link on it, the
 * redirects (with the sign-in cookie) to the landing page, and the `bmg_tt_…` token that page shows.
 * Each `# →` comment is checked against what its command printed (`…` stands for anything).
 */
import { assert, describe, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { ROOT } from "../process/SpawnFixtures.ts"
import { walkthroughSteps } from "./ReadmeWalkthroughFixtures.ts"
import { runWalkthrough, walkthroughGateway } from "./WalkthroughRun.ts"

const gw = walkthroughGateway("readme-walkthrough-test")
const UA = gw.headers

/** Follows one redirect by hand, keeping the sign-in cookie as a browser would. */
const get = async (url: string, cookie: string) => {
  const res = await fetch(url, { redirect: "manual", headers: { ...UA, ...(cookie === "" ? {} : { cookie }) } })
  const set = res.headers.get("set-cookie")
  return { res, cookie: set === null ? cookie : set.split(";")[0]!, location: res.headers.get("location") }
}

/** The browser's sign-in as alice, ending on the landing page; the temporary token it shows. */
const signInAsAlice = async (loginUrl: string): Promise<string> => {
  let step = await get(loginUrl, "")
  assert.strictEqual(step.res.status, 307, "the login sends the browser to the platform's sign-in page")
  step = await get(new URL(step.location!, gw.url).href, step.cookie)
  const page = await step.res.text()
  const link = /<a href="([^"]+)">Sign in as Alice/.exec(page)?.[1]
  assert.isDefined(link, `the sign-in page offers alice:\n${page}`)
  step = await get(new URL(link!.replaceAll("&amp;", "&"), gw.url).href, step.cookie)
  while (step.location !== null) step = await get(new URL(step.location, gw.url).href, step.cookie)
  const landing = await step.res.text()
  const code = /<pre>(bmg_tt_[^<]+)<\/pre>/.exec(landing)?.[1]
  assert.isDefined(code, `the landing page shows the temporary token:\n${landing}`)
  return code!
}

describe("README walkthroughs", () => {
  it("run as pasted and answer what the README shows", async () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8")
    const steps = walkthroughSteps(readme)
    const loginUrl = /Open `(http:\/\/127\.0\.0\.1:8080\/auth\/idp\/login\?redirect_uri=[^`]+)`/.exec(readme)?.[1]
    assert.isDefined(loginUrl, "the README gives the sign-in URL")
    const code = await signInAsAlice(loginUrl!.replaceAll("http://127.0.0.1:8080", gw.url))
    await runWalkthrough(steps, { GATEWAY: gw.url, CODE: code }, { source: "README", minShown: 15 })
  }, 200_000)
})
