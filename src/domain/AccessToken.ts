/**
 * The one token parser: the contract's four equivalent header forms.
 *   Authorization: <token> | Authorization: Bearer <token> | X-Access-Token: <token> | X-Access-Token: Bearer <token>
 */
export const parseToken = (value: string | undefined): string | undefined => {
  if (value === undefined) return undefined
  let v = value.trim()
  if (/^bearer\s/i.test(v)) v = v.slice(6).trim()
  // Tokens are base64url with a prefix; anything with whitespace or control characters is not one.
  return v.length > 0 && v.length <= 512 && /^[\x21-\x7e]+$/.test(v) ? v : undefined
}

export const accessTokenFrom = (headers: Readonly<Record<string, string | undefined>>): string | undefined =>
  parseToken(headers["authorization"]) ?? parseToken(headers["x-access-token"])
