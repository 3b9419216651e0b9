/** Signing a user in on the sandbox's chat platform, for the suites that run a live client against it. */
import { Effect } from "effect"

/** The sandbox's authorize page signs the hinted user in at once and redirects with the code. */
export const approveOnSandbox = (authorizeUrl: string, userId: string) =>
  Effect.promise(async () => {
    const response = await fetch(`${authorizeUrl}&login_hint=${userId}`, { redirect: "manual" })
    const back = new URL(response.headers.get("location") ?? "http://invalid/")
    return { code: back.searchParams.get("code") ?? "", state: back.searchParams.get("state") ?? "" }
  })
