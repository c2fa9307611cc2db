/**
 * Types for fast-json-patch's core module, imported by path: the package root's default
 * export (an object of every function) keeps `observe`/`compare` and their helpers in the
 * Worker's bundle although the gateway only applies and validates patches. The package
 * ships the declarations beside the module, under a name TypeScript does not pair with `.mjs`.
 */
declare module "fast-json-patch/module/core.mjs" {
  export * from "fast-json-patch/module/core";
}
