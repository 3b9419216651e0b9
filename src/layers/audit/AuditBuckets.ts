/**
 * The shape of the audit counters, shared by the migration that builds them (0004_audit) and the
 * one whose `audit_page` walks them for AuditLogSql (0010_one_statement): how dense a bucket may
 * be, the bucket sizes, the modules counted in their own columns, and the counter shards of a
 * dense month. Both migrations bake the values in: changing one here needs a new migration that
 * rebuilds `audit_count_shards` and recreates the functions of both.
 */

/** A bucket with more entries than this is split into its children (and counted per shard). */
export const AUDIT_DENSE = 1000
/** Bucket sizes by level: 0 = hour, 1 = day, 2 = 32 days (epoch-aligned). */
export const AUDIT_LEVEL_SECONDS = [3600, 86400, 2764800] as const
/** Modules with a count column of their own (the fixed list of the logs route). */
export const AUDIT_COUNT_MODULES = ["forms", "photo", "forum", "rss", "streaming", "microblog", "video"] as const
/** Counter shards of a dense month (besides shard 0); a connection always writes the same one. */
export const AUDIT_SHARDS = 16
