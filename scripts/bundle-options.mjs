// The esbuild options every server-side bundle shares: the gateway's (scripts/build.mjs) and the
// benchmark's floor (bench/floor/build.mjs), so the floor's bundle has the gateway's shape (and heap).
export const serverBundleOptions = {
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  sourcemap: true,
  // V8 keeps a script's source text in the heap for as long as it runs, at two bytes a character
  // once one character is outside Latin-1 (a few in the bundled libraries' comments are): ASCII
  // output without comments and indentation takes the live heap's source text from 18.8 to ~7.5
  // MiB. Names are kept (no identifier minification), and the source map still gives stack traces.
  minifyWhitespace: true,
  charset: "ascii",
  legalComments: "none",
  logLevel: "warning",
  external: ["@electric-sql/pglite", "@electric-sql/pglite-socket", "redis", "@redis/*"],
  banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" }
}
