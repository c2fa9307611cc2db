/** @jsxRuntime classic */
/** @jsx h */
/**
 * A small bar chart of calls (and errors) per minute, drawn as SVG on the server: no
 * script, no style attribute (the CSP forbids inline style), and a text equivalent for
 * screen readers.
 */
import { h } from "./jsx";

const BAR_WIDTH = 4;
const CHART_HEIGHT = 40;

/** Bars of `calls` per slot with the `errors` part in the error colour. */
export function MinuteChart({
  calls,
  errors,
  label,
}: {
  calls: readonly number[];
  errors: readonly number[];
  label: string;
}) {
  const most = Math.max(1, ...calls);
  const total = calls.reduce((a, b) => a + b, 0);
  const failed = errors.reduce((a, b) => a + b, 0);
  const height = (n: number) => (n === 0 ? 0 : Math.max(1, Math.round((n / most) * CHART_HEIGHT)));
  return (
    <svg
      class="chart"
      viewBox={`0 0 ${calls.length * BAR_WIDTH} ${CHART_HEIGHT}`}
      preserveAspectRatio="none"
      role="img"
      aria-label={`${label}: ${total} calls, ${failed} errors`}
    >
      <title>{`${label}: ${total} calls, ${failed} errors`}</title>
      {calls.map((n, i) => (
        <rect
          x={i * BAR_WIDTH}
          y={CHART_HEIGHT - height(n)}
          width={BAR_WIDTH - 1}
          height={height(n)}
          fill="currentColor"
        />
      ))}
      <g class="errors">
        {errors.map((n, i) => (
          <rect
            x={i * BAR_WIDTH}
            y={CHART_HEIGHT - height(n)}
            width={BAR_WIDTH - 1}
            height={height(n)}
            fill="currentColor"
          />
        ))}
      </g>
    </svg>
  );
}
