/**
 * A Worker binding (KV, a Durable Object namespace) that tells `seen` of each method called
 * on it before calling it: how tests count what the gateway asks of a binding, passed in a
 * request's vars in place of the real one.
 */
export function countingBinding<T extends object>(binding: T, seen: (method: string, args: unknown[]) => void): T {
  return new Proxy(binding, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        seen(String(property), args);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}
