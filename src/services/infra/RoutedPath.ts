/**
 * The path of a request as the router matches it (Effect's FindMyWay): the absolute form reduced to
 * its path, cut at `?`, `;` or `#`, %xx decoded, repeated slashes merged, case ignored. What decides
 * by path outside the router has to read it so: the edge's guards (http/edge/Envelope.ts), so that no
 * spelling of a gateway path (`/API/…`, `/%61pi/…`, `//api/…`, `http://host/api/…`) passes them; and
 * the requests' metric label (Metrics.ts), so that such spellings add no series.
 */
export const routedPath = (url: string): string => {
  let path = url.charCodeAt(0) === 47 ? url : url.replace(/^https?:\/\/.*?\//i, "/")
  const end = path.slice(1).search(/[?;#]/)
  if (end >= 0) path = path.slice(0, end + 1)
  try {
    path = decodeURI(path)
  } catch {
    // Malformed %xx: the router matches nothing either (404).
  }
  return path.replace(/\/{2,}/g, "/").toLowerCase()
}
