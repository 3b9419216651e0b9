/** The V8 flags of package.json's start script (scripts/node-flags.mjs), e.g. ["--max-semi-space-size=16"]. */
export declare const nodeFlags: ReadonlyArray<string>
