/** The modules the gateway configures, and the permission each needs (decisions.md). */
import type { ModuleName } from "../../domain/platform/Platform.ts"
import { Permission } from "./ChatPlatform.ts"

export interface ModuleInfo {
  readonly name: ModuleName
  readonly full_name: string
  readonly short_description: string
  readonly needs: bigint
}

const feed = Permission.MANAGE_GUILD | Permission.MANAGE_WEBHOOKS

export const MODULES: ReadonlyArray<ModuleInfo> = [
  { name: "forms", full_name: "Forms builder", short_description: "Workflows of questions, optionally linked to a task board.", needs: Permission.MANAGE_GUILD },
  { name: "photo", full_name: "Photo feeds", short_description: "Posts from a photo-sharing service.", needs: feed },
  { name: "forum", full_name: "Forum feeds", short_description: "Posts from a forum community.", needs: feed },
  { name: "rss", full_name: "RSS reader", short_description: "Items of RSS and Atom feeds.", needs: feed },
  { name: "streaming", full_name: "Live-streaming feeds", short_description: "Go-live and offline notifications.", needs: feed },
  { name: "microblog", full_name: "Microblog feeds", short_description: "Posts from a microblog service.", needs: feed },
  { name: "video", full_name: "Video feeds", short_description: "New and updated videos of a channel.", needs: feed }
]

/** ADMINISTRATOR (and ownership, which the caller folds into `perms`) implies every permission. */
export const has = (perms: bigint, needed: bigint) =>
  (perms & Permission.ADMINISTRATOR) !== 0n || (perms & needed) === needed
