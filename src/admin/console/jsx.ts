/**
 * The console's JSX factory. The pages are compiled with the classic JSX transform
 * (`h(tag, props, ...children)`, tsconfig.json's `jsxFactory`) instead of the automatic
 * one (`jsx(tag, { ...props, children: [...] })`): the same elements in about 3 KiB less
 * bundle, every cold isolate parsing it. `h` hands Hono's JSX runtime exactly the props
 * object the automatic transform would have built, children included (one child as
 * itself, several as an array), so what renders is unchanged.
 */
import { Fragment, jsx, type JSX as HonoJSX } from "hono/jsx/jsx-runtime";

export { Fragment };

/** What a JSX element is made from: a tag name or a component. */
// biome-ignore lint/complexity/noBannedTypes: Hono's jsx() takes `string | Function`; this forwards the tag as given.
type JsxTag = string | Function;

/** Builds one JSX element; called by the compiled `.tsx` files, not by hand. */
export function h(tag: JsxTag, props: Record<string, unknown> | null, ...children: unknown[]): ReturnType<typeof jsx> {
  const given = props ?? {};
  if (children.length === 0) return jsx(tag, given);
  return jsx(tag, { ...given, children: children.length === 1 ? children[0] : children });
}

/** The JSX types the classic transform looks up on its factory: Hono's. */
export declare namespace h {
  namespace JSX {
    type Element = HonoJSX.Element;
    type ElementType = HonoJSX.ElementType;
    interface ElementChildrenAttribute extends HonoJSX.ElementChildrenAttribute {}
    interface IntrinsicElements extends HonoJSX.IntrinsicElements {}
    interface IntrinsicAttributes extends HonoJSX.IntrinsicAttributes {}
  }
}
