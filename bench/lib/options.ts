/**
 * Command-line options of the benches: each option is `--name value` (or `--name=value`),
 * else an environment variable, else a default; and integer checks with a clear message.
 */

/** Option name → [environment variable, default]. */
export type OptionSpec = Readonly<Record<string, readonly [string, string]>>;

/** The raw value of every option in `spec`; throws naming the known options for an unknown one. */
export function readOptions(spec: OptionSpec, argv: readonly string[]): Record<string, string> {
  const raw: Record<string, string> = Object.fromEntries(
    Object.entries(spec).map(([key, [env, fallback]]) => [key, process.env[env] || fallback]),
  );
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i]!.split(/=(.*)/s);
    const key = flag!.replace(/^--/, "");
    if (!flag!.startsWith("--") || !(key in spec))
      throw new Error(
        `unknown option ${argv[i]}; known: ${Object.keys(spec)
          .map((k) => `--${k}`)
          .join(" ")}`,
      );
    const value = inline ?? argv[++i];
    if (value === undefined) throw new Error(`${flag} needs a value`);
    raw[key] = value;
  }
  return raw;
}

/** `raw[key]` as an integer from `min` to `max`; throws naming the option otherwise. */
export function integerOption(
  raw: Readonly<Record<string, string>>,
  key: string,
  min: number,
  max = Number.POSITIVE_INFINITY,
): number {
  const n = Number(raw[key]);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new Error(
      `--${key} must be an integer from ${min}${Number.isFinite(max) ? ` to ${max}` : " up"}, got "${raw[key]}"`,
    );
  return n;
}
