/**
 * NestJS 12 and a few of its dependencies ship only ES modules. Plain Node loads them through
 * require(esm); jest (CommonJS) does so only under --experimental-vm-modules, so it gets them transpiled. ts-jest does that, except for `import.meta.url`,
 * which has no CommonJS form: it becomes the module's own file URL before ts-jest sees the source, and
 * a module-level `const require = createRequire(import.meta.url)` is dropped (CommonJS has its own require).
 */
const tsJest = require('ts-jest').default;

const IMPORT_META_URL = /\bimport\.meta\.url\b/g;
const OWN_REQUIRE = /^const require = createRequire\(import\.meta\.url\);?$/gm;
const withFileUrl = (source) =>
  source.includes('import.meta')
    ? source.replace(OWN_REQUIRE, '').replace(IMPORT_META_URL, 'require("node:url").pathToFileURL(__filename).href')
    : source;

module.exports = {
  createTransformer(options) {
    const inner = tsJest.createTransformer(options);
    return {
      ...inner,
      process: (source, path, opts) => inner.process(withFileUrl(source), path, opts),
      processAsync: (source, path, opts) => inner.processAsync(withFileUrl(source), path, opts),
      getCacheKey: (source, path, opts) => inner.getCacheKey(withFileUrl(source), path, opts),
    };
  },
};
