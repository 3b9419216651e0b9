/**
 * A function of a string remembered per argument, for values that hot paths compute again and again
 * from the same few strings (a route's label, a permission set). At most `limit` arguments are kept;
 * beyond that the map starts over (a scan of distinct arguments costs recomputation, never memory).
 */
export const boundedMemo = <A>(limit: number, compute: (key: string) => A) => {
  const memo = new Map<string, A>()
  return (key: string): A => {
    let value = memo.get(key)
    if (value === undefined) {
      if (memo.size >= limit) memo.clear()
      value = compute(key)
      memo.set(key, value)
    }
    return value
  }
}
