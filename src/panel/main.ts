/**
 * The control panel: a single-page app served by the gateway at /app (src/http/server/PanelPage.ts), built
 * with Preact and @preact/signals (scripts/build-panel.mjs), speaking only the public API through the
 * typed client (src/http/client.ts).
 */
import { h, render } from "preact"
import { AuditLog } from "./audit.ts"
import { isFeedModule } from "./feeds/feedCommon.ts"
import { FeedEditor } from "./feeds/feedEditor.ts"
import { DeliveryLog, FeedPreviewScreen } from "./feeds/feedInsight.ts"
import { FeedsList } from "./feeds/feedList.ts"
import { FormEditor } from "./forms/formEditor.ts"
import { FormsList } from "./forms/formList.ts"
import { PublishForm } from "./forms/publish.ts"
import { SubmissionsList, SubmissionView } from "./forms/submissions.ts"
import { match, path, startRouter } from "./router.ts"
import { Bots, Callback, Modules, Servers, SignIn } from "./screens.ts"
import { auth, CALLBACK_PATH, restore } from "./session.ts"
import { Page } from "./ui.ts"

const SERVER = "/app/bots/:bot/servers/:server"

const NotFound = () =>
  h(Page, { title: "Page not found", crumbs: [{ label: "Bots", href: "/app" }, { label: "Not found" }] },
    h("p", null, "This address is not a page of the panel. ", h("a", { href: "/app" }, "Go to the bots.")))

const App = () => {
  const at = path.value
  if (at.split("?")[0] === CALLBACK_PATH) return h(Callback, null)
  const state = auth.value
  if (state.kind === "loading") return h("main", { id: "main", class: "signin" }, h("p", { role: "status" }, "Loading…"))
  if (state.kind === "signedOut") return h(SignIn, null)
  let m: Record<string, string> | undefined
  if ((m = match("/app", at)) !== undefined) return h(Bots, null)
  if ((m = match("/app/bots/:bot", at)) !== undefined) return h(Servers, { key: at, bot: m["bot"]! })
  if ((m = match(SERVER, at)) !== undefined) return h(Modules, { key: at, bot: m["bot"]!, server: m["server"]! })
  if ((m = match(`${SERVER}/forms`, at)) !== undefined) return h(FormsList, { key: at, bot: m["bot"]!, server: m["server"]! })
  if ((m = match(`${SERVER}/forms/new`, at)) !== undefined) return h(FormEditor, { key: at, bot: m["bot"]!, server: m["server"]!, form: undefined })
  if ((m = match(`${SERVER}/forms/:form/publish`, at)) !== undefined && /^\d+$/.test(m["form"]!)) {
    return h(PublishForm, { key: at, bot: m["bot"]!, server: m["server"]!, form: m["form"]! })
  }
  if ((m = match(`${SERVER}/forms/:form/submissions`, at)) !== undefined && /^\d+$/.test(m["form"]!)) {
    return h(SubmissionsList, { key: at, bot: m["bot"]!, server: m["server"]!, form: m["form"]!, search: at.includes("?") ? at.slice(at.indexOf("?")) : "" })
  }
  if ((m = match(`${SERVER}/forms/:form/submissions/:submission`, at)) !== undefined && /^\d+$/.test(m["form"]!) && /^\d+$/.test(m["submission"]!)) {
    return h(SubmissionView, { key: at, bot: m["bot"]!, server: m["server"]!, form: m["form"]!, submission: m["submission"]! })
  }
  if ((m = match(`${SERVER}/forms/:form`, at)) !== undefined && /^\d+$/.test(m["form"]!)) {
    return h(FormEditor, { key: at, bot: m["bot"]!, server: m["server"]!, form: m["form"]! })
  }
  if ((m = match(`${SERVER}/audit`, at)) !== undefined) {
    return h(AuditLog, { key: at, bot: m["bot"]!, server: m["server"]!, search: at.includes("?") ? at.slice(at.indexOf("?")) : "" })
  }
  if ((m = match(`${SERVER}/feeds/:module`, at) ?? match(`${SERVER}/feeds/:module/:feed`, at) ?? match(`${SERVER}/feeds/:module/:feed/:view`, at)) !== undefined) {
    const module = m["module"]!
    const feed = m["feed"]
    const view = m["view"]
    if (!isFeedModule(module)) return h(NotFound, null)
    const common = { key: at, bot: m["bot"]!, server: m["server"]! , module }
    if (feed === undefined) return h(FeedsList, common)
    if (feed === "new" && view === undefined) return h(FeedEditor, { ...common, feed: undefined })
    if (!/^\d+$/.test(feed)) return h(NotFound, null)
    if (view === undefined) return h(FeedEditor, { ...common, feed })
    if (view === "preview") return h(FeedPreviewScreen, { ...common, feed })
    if (view === "deliveries") {
      const page = Math.max(1, Number(new URLSearchParams(at.includes("?") ? at.slice(at.indexOf("?")) : "").get("page") ?? "1") || 1)
      return h(DeliveryLog, { ...common, feed, page })
    }
  }
  return h(NotFound, null)
}

startRouter()
if (location.pathname !== CALLBACK_PATH) void restore()
render(h(App, null), document.getElementById("app")!)
