/**
 * The one token parser: the contract's four equivalent header forms.
 *   Authorization: <token> | Authorization: Bearer <token> | X-Access-Token: <token> | X-Access-Token: Bearer <token>
 */

/** The longest token read (ours are 50 characters); a longer value is not a token and is never looked up. */
export const MAX_TOKEN_LENGTH = 512

export const parseToken = (value: string | undefined): string | undefined => {
  if (value === undefined) return undefined
  let v = value.trim()
  // Stryker disable next-line Regex: unanchored, a "bearer " inside the value leaves a space in what follows the first 6 characters, refused below like the whole value
  if (/^bearer\s/i.test(v)) v = v.slice(6).trim()
  else if (/^bearer$/i.test(v)) return undefined
  // Tokens are base64url with a prefix; anything with whitespace (another scheme, e.g. `Basic …`)
  // or control characters is not one.
  return v.length > 0 && v.length <= MAX_TOKEN_LENGTH && /^[\x21-\x7e]+$/.test(v) ? v : undefined
}

/**
 * The access tokens a request presents, Authorization's first. Both are candidates: a header a
 * proxy or library set for its own purpose (`Authorization: Bearer <its JWT>`) must not hide a
 * valid `X-Access-Token`; the request is authenticated by the first that resolves.
 */
export const accessTokensFrom = (headers: Readonly<Record<string, string | undefined>>): ReadonlyArray<string> => {
  const fromAuthorization = parseToken(headers["authorization"])
  const fromHeader = parseToken(headers["x-access-token"])
  if (fromAuthorization === undefined) return fromHeader === undefined ? [] : [fromHeader]
  return fromHeader === undefined || fromHeader === fromAuthorization ? [fromAuthorization] : [fromAuthorization, fromHeader]
}

/** The first presented access token (Authorization's, else X-Access-Token's). */
export const accessTokenFrom = (headers: Readonly<Record<string, string | undefined>>): string | undefined =>
  accessTokensFrom(headers)[0]
