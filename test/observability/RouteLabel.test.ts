import { describe, expect, it } from "vitest"
import { routeLabel } from "../../src/services/Metrics.ts"

describe("routeLabel: a bounded metrics label from the path", () => {
  it.each([
    ["/api/v1/bots/123/servers/456/modules/forms/7", 200, "/api/v1/bots/:id/servers/:id/modules/forms/:id"],
    ["/api/v1/bots/123/servers/456/modules/rss/feeds/9/status?x=1", 200, "/api/v1/bots/:id/servers/:id/modules/rss/feeds/:id/status"],
    ["/api/v1/bots/1/servers/2/modules/streaming/getUserId/some_streamer", 200, "/api/v1/bots/:id/servers/:id/modules/streaming/getUserId/:name"],
    ["/api/v1/bots/1/servers/2/modules/streaming/getGameId/Just%20Chatting", 404, "unmatched"],
    ["/sandbox/discord/api/v10/webhooks/1/secret-token", 204, "/sandbox/*"],
    ["/auth/idp/token/refresh", 200, "/auth/idp/token/refresh"],
    ["/anything/a-scanner/tried", 404, "unmatched"]
  ] as const)("%s (%i) → %s", (url, status, label) => {
    expect(routeLabel(url, status)).toBe(label)
  })
})
