/** The sandbox's two bots: FormsBot and FeedsBot (registered at start in sandbox mode, SandboxMode.ts). */
import { BOT1_ID, BOT1_TOKEN, BOT2_ID, BOT2_TOKEN } from "./Ids.ts"
import type { SeedBot } from "./Shapes.ts"

export const BOT1: SeedBot = { id: BOT1_ID, name: "FormsBot", username: "FormsBot", token: BOT1_TOKEN, avatar: "f0000000000000000000000000000b01" }
export const BOT2: SeedBot = { id: BOT2_ID, name: "FeedsBot", username: "FeedsBot", token: BOT2_TOKEN, avatar: "fe000000000000000000000000000b02" }

export const BOTS: ReadonlyArray<SeedBot> = [BOT1, BOT2]
