/**
 * Payloads for the benchmarks: shaped like what broad APIs answer.
 */

/** A GitHub-like "search issues" answer: many fields per item, nested users and labels, long URLs. */
export function githubLikePayload(targetBytes: number): {
  total_count: number;
  incomplete_results: boolean;
  items: unknown[];
} {
  const items: unknown[] = [];
  const user = (i: number) => ({
    login: `user${i}`,
    id: 1000 + i,
    node_id: `MDQ6VXNlcj${i}`,
    avatar_url: `https://avatars.githubusercontent.com/u/${1000 + i}?v=4`,
    gravatar_id: "",
    url: `https://api.github.com/users/user${i}`,
    html_url: `https://github.com/user${i}`,
    followers_url: `https://api.github.com/users/user${i}/followers`,
    following_url: `https://api.github.com/users/user${i}/following{/other_user}`,
    gists_url: `https://api.github.com/users/user${i}/gists{/gist_id}`,
    starred_url: `https://api.github.com/users/user${i}/starred{/owner}{/repo}`,
    subscriptions_url: `https://api.github.com/users/user${i}/subscriptions`,
    organizations_url: `https://api.github.com/users/user${i}/orgs`,
    repos_url: `https://api.github.com/users/user${i}/repos`,
    events_url: `https://api.github.com/users/user${i}/events{/privacy}`,
    received_events_url: `https://api.github.com/users/user${i}/received_events`,
    type: "User",
    site_admin: false,
  });
  // Sizes are summed item by item: stringifying the growing list each time would be quadratic.
  for (let i = 0, size = 0; size < targetBytes; i++) {
    const item = {
      url: `https://api.github.com/repos/acme/widgets/issues/${i}`,
      repository_url: "https://api.github.com/repos/acme/widgets",
      labels_url: `https://api.github.com/repos/acme/widgets/issues/${i}/labels{/name}`,
      comments_url: `https://api.github.com/repos/acme/widgets/issues/${i}/comments`,
      events_url: `https://api.github.com/repos/acme/widgets/issues/${i}/events`,
      html_url: `https://github.com/acme/widgets/issues/${i}`,
      id: 5_000_000 + i,
      node_id: `I_kwDOA${i}`,
      number: i,
      title: `Widget ${i} breaks when the gadget is rotated`,
      user: user(i % 50),
      labels: [
        {
          id: 1,
          node_id: "LA_1",
          url: "https://api.github.com/repos/acme/widgets/labels/bug",
          name: "bug",
          color: "d73a4a",
          default: true,
          description: "Something isn't working",
        },
      ],
      state: i % 3 === 0 ? "closed" : "open",
      locked: false,
      assignee: null,
      assignees: [],
      milestone: null,
      comments: i % 7,
      created_at: "2026-10-01T12:00:00Z",
      updated_at: "2026-11-01T12:00:00Z",
      closed_at: null,
      author_association: "CONTRIBUTOR",
      active_lock_reason: null,
      body: `Steps to reproduce issue ${i}: rotate the gadget by ninety degrees and watch the widget fall over. `.repeat(
        3,
      ),
      reactions: {
        url: `https://api.github.com/repos/acme/widgets/issues/${i}/reactions`,
        total_count: 0,
        "+1": 0,
        "-1": 0,
        laugh: 0,
        hooray: 0,
        confused: 0,
        heart: 0,
        rocket: 0,
        eyes: 0,
      },
      timeline_url: `https://api.github.com/repos/acme/widgets/issues/${i}/timeline`,
      performed_via_github_app: null,
      state_reason: null,
      score: 1.0,
    };
    items.push(item);
    size += JSON.stringify(item).length + 1;
  }
  return { total_count: items.length, incomplete_results: false, items };
}
