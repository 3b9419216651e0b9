/**
 * The one command of every bot (forms-runtime.md §1): `/submit`, a chat-input command (type 1) used
 * in servers only (`contexts: [0]`, GUILD), and the hash that says whether it must be sent again.
 */
import { createHash } from "node:crypto"

export const SUBMIT_COMMANDS: ReadonlyArray<unknown> = [{
  name: "submit",
  type: 1,
  description: "Fill in one of this server's forms",
  contexts: [0],
  integration_types: [0]
}]

export const commandsHash = (commands: ReadonlyArray<unknown>) => createHash("sha256").update(JSON.stringify(commands)).digest("hex")
