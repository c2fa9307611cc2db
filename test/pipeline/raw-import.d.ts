/** Vite's `?raw` imports (a file's text), which the tests of this folder use to read docs. */
declare module "*?raw" {
  const text: string;
  export default text;
}
