import { describe, expect, it } from "vitest"
import { routeLabel, upstreamRoute } from "../../src/services/infra/Metrics.ts"

describe("routeLabel: a bounded metrics label from the path", () => {
  it.each([
    ["/api/v1/bots/123/servers/456/modules/forms/7", 200, "/api/v1/bots/:id/servers/:id/modules/forms/:id"],
    ["/api/v1/bots/123/servers/456/modules/rss/feeds/9/status?x=1", 200, "/api/v1/bots/:id/servers/:id/modules/rss/feeds/:id/status"],
    ["/api/v1/bots/1/servers/2/modules/streaming/getUserId/some_streamer", 200, "/api/v1/bots/:id/servers/:id/modules/streaming/getUserId/:name"],
    ["/api/v1/bots/1/servers/2/modules/streaming/getGameId/Just%20Chatting", 404, "unmatched"],
    ["/sandbox/discord/api/v10/webhooks/1/secret-token", 204, "/sandbox/*"],
    ["/auth/idp/token/refresh", 200, "/auth/idp/token/refresh"],
    ["/anything/a-scanner/tried", 404, "unmatched"],
    // Spellings the router matches too: the same label, never the looked-up name.
    ["/api/v1/bots/1/servers/2/modules/streaming/getUserId//sandboxstreamer", 200, "/api/v1/bots/:id/servers/:id/modules/streaming/getUserId/:name"],
    ["/API/V1/BOTS/1/SERVERS/2/MODULES/STREAMING/GETUSERID/SANDBOXSTREAMER", 200, "/api/v1/bots/:id/servers/:id/modules/streaming/getUserId/:name"],
    ["/api/v1/bots/1/servers/2/modules/streaming/getGameId/Just%20Chatting/", 200, "/api/v1/bots/:id/servers/:id/modules/streaming/getGameId/:name"],
    ["/api/v1/user;session=1", 200, "/api/v1/user"],
    ["//api//v1/us%65r/", 200, "/api/v1/user"],
    ["http://127.0.0.1:8080/api/v1/bots/7/servers", 200, "/api/v1/bots/:id/servers"],
    ["/SANDBOX/sources/streaming/sandboxstreamer/events", 201, "/sandbox/*"],
    ["/", 200, "/"],
    ["/readyz", 200, "/readyz"]
  ] as const)("%s (%i) → %s", (url, status, label) => {
    expect(routeLabel(url, status)).toBe(label)
  })
})

describe("upstreamRoute: an upstream call's route template, never a name or an id", () => {
  it.each([
    ["GET", "https://api.twitch.tv/helix/users?login=somebody", "GET /helix/users"],
    ["POST", "https://id.twitch.tv/oauth2/token", "POST /oauth2/token"],
    ["GET", "https://www.googleapis.com/youtube/v3/channels?forUsername=x", "GET /youtube/v3/channels"],
    ["GET", "https://api.x.com/2/users/by/username/jack", "GET /2/users/by/username/:name"],
    ["GET", "https://api.x.com/2/users/1234567890/tweets", "GET /2/users/:id/tweets"],
    ["GET", "https://graph.facebook.com/17841400000000000", "GET /:id"],
    ["GET", "https://oauth.reddit.com/r/typescript/about", "GET /r/:name/about"],
    ["GET", "https://oauth.reddit.com/r/typescript/api/link_flair_v2", "GET /r/:name/api/link_flair_v2"],
    ["GET", "https://oauth.reddit.com/r/Some_Sub/new.json", "GET /r/:name/new.json"],
    ["GET", "https://api.trello.com/1/organizations/my-team/boards", "GET /1/organizations/:name/boards"],
    ["GET", "http://127.0.0.1:8080/sandbox/streaming/helix/users", "GET /sandbox/streaming/helix/users"],
    ["GET", "https://example.com/some%20thing/x-y.xml", "GET /:param/:param"]
  ] as const)("%s %s → %s", (method, url, route) => {
    expect(upstreamRoute(method, url)).toBe(route)
  })
})
