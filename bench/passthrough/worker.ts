/**
 * The benchmark's floor: a Worker that does nothing but forward each request (method,
 * headers, body, and its query when it has one) to the URL in its TARGET var and stream
 * the answer back.
 *
 * Run under `wrangler dev` exactly like the gateway, it measures what any relay pays
 * for being a Worker on this machine (the dev proxy, workerd's HTTP parsing, one
 * outgoing fetch), so `npm run bench` can tell that cost apart from the gateway's own.
 * Not part of the gateway; never deployed.
 */

/** The bindings wrangler.toml and `--var TARGET:<url>` give this Worker. */
export type PassthroughEnv = { readonly TARGET?: string };

/**
 * Forwards `request` to `target` unchanged and returns the target's response as it
 * streams. The request's query parameters are set on the target's (bench:slow-client
 * names its flood there).
 */
export function forwardTo(request: Request, target: string): Promise<Response> {
  const hasBody = request.method !== "GET" && request.method !== "HEAD";
  const url = new URL(target);
  for (const [name, value] of new URL(request.url).searchParams) url.searchParams.set(name, value);
  return fetch(url, {
    method: request.method,
    headers: request.headers,
    body: hasBody ? request.body : null,
    redirect: "manual",
  });
}

// wrangler needs the module's default export to be the handler.
export default {
  fetch(request: Request, env: PassthroughEnv): Promise<Response> | Response {
    if (!env.TARGET) return new Response("pass-through: set the TARGET var (--var TARGET:<url>)\n", { status: 500 });
    return forwardTo(request, env.TARGET);
  },
};
