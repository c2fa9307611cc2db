/**
 * Which tasks each principal created through the gateway, in KV: one key per task,
 * `task-owner/<owner tag>/<task tag>` (tags from task-ids.ts: HMACs, so a key names
 * neither the principal nor the upstream's id), kept as long as the task may live.
 *
 * An upstream whose task store is keyed by id alone lists every principal's tasks to
 * anyone; the gateway shows a caller only the tasks this index says are theirs. KV lists
 * are eventually consistent: a task created a moment ago in another location may be
 * missing from a list for up to a minute (it is never shown to anyone else), and its id
 * works at once (the id itself proves it was handed to the caller).
 */

const TASK_OWNER_PREFIX = "task-owner/";
/** KV keeps nothing for less than a minute. */
const MIN_TTL_SECONDS = 60;
/** How long an entry is kept for a task with no ttl (or a longer one). */
export const MAX_TASK_OWNER_TTL_SECONDS = 7 * 24 * 60 * 60;
/** Keys read per KV list call (the most KV gives). */
const LIST_PAGE_KEYS = 1000;
/** List calls per task list: a principal's tasks beyond 5,000 live ones may be left out of lists (never out of reach by id). */
const MAX_LIST_PAGES = 5;

/**
 * Records that the owner of `owner` created the task tagged `task`, for `ttlMs` (the
 * task's own ttl; null: as long as the index keeps anything).
 *
 * @example
 * await recordTaskOwner(kv, await ownerTag(binding), await taskTag(binding, "gh", "42"), 60_000);
 */
export async function recordTaskOwner(
  kv: KVNamespace,
  owner: string,
  task: string,
  ttlMs: number | null,
): Promise<void> {
  const seconds = ttlMs === null ? MAX_TASK_OWNER_TTL_SECONDS : Math.ceil(ttlMs / 1000);
  const expirationTtl = Math.min(MAX_TASK_OWNER_TTL_SECONDS, Math.max(MIN_TTL_SECONDS, seconds));
  await kv.put(`${TASK_OWNER_PREFIX}${owner}/${task}`, "", { expirationTtl });
}

/**
 * The tags of the tasks recorded for `owner` (at most MAX_LIST_PAGES pages of the index).
 *
 * @example
 * const mine = await ownedTasks(kv, await ownerTag(binding));
 * mine.has(await taskTag(binding, "gh", "42"));
 */
export async function ownedTasks(kv: KVNamespace, owner: string): Promise<ReadonlySet<string>> {
  const prefix = `${TASK_OWNER_PREFIX}${owner}/`;
  const tags = new Set<string>();
  let cursor: string | undefined;
  for (let page = 0; page < MAX_LIST_PAGES; page++) {
    const listed: KVNamespaceListResult<unknown, string> = await kv.list({
      prefix,
      limit: LIST_PAGE_KEYS,
      ...(cursor ? { cursor } : {}),
    });
    for (const key of listed.keys) tags.add(key.name.slice(prefix.length));
    if (listed.list_complete) break;
    cursor = listed.cursor;
  }
  return tags;
}
