const path = require('node:path');

/**
 * Tests run against real NATS JetStream, PostgreSQL, git and kubectl; see .ci/run.
 * @kubernetes/client-node 2.x and several dependencies ship only ES modules: plain Node loads them
 * through require(esm), but jest's CommonJS runtime does that only under --experimental-vm-modules,
 * so jest gets them transpiled instead.
 */
const ESM_PACKAGES = [
  '@nestjs',
  'file-type',
  'strtok3',
  'token-types',
  '@tokenizer',
  'uint8array-extras',
  '@kubernetes/client-node',
  'socks-proxy-agent',
  'agent-base',
  'jsonpath-plus',
  '@jsep-plugin',
  'jsep',
  'rfc4648',
  'openid-client',
  'oauth4webapi',
  'jose',
  'age-encryption',
  '@noble',
  '@scure',
  // The schema packages and what their validators import (docs/generator.md).
  'kubernetes-models',
  '@kubernetes-models',
  'is-cidr',
  'cidr-regex',
  // @octokit/rest 22 (the GitHub forge adapter, libs/delivery) and the ES modules it imports.
  '@octokit',
  'universal-user-agent',
  'before-after-hook',
];

/**
 * The schema packages export their files for `import` only; jest resolves like `require`, so their
 * bare specifiers are mapped to the files (plain Node loads them as ES modules and needs none of this).
 */
const SCHEMA_PACKAGE_FILES = {
  '^@kubernetes-models/validate$': '<rootDir>/node_modules/@kubernetes-models/validate/dist/index.js',
  '^@kubernetes-models/validate/runtime/(.*?)(\\.js)?$':
    '<rootDir>/node_modules/@kubernetes-models/validate/dist/runtime/$1.js',
  '^(kubernetes-models|@kubernetes-models/[a-z-]+)/_schemas/(.*?)(\\.js)?$': '<rootDir>/node_modules/$1/_schemas/$2.js',
};

/**
 * The programs the tests start by name (kubectl, helm, promtool, age, zsh, fish, chromium) are in the
 * checkout's .tools/bin, which npm test's pretest fills (scripts/ensure-services.sh): first on PATH, so
 * the pinned kubectl wins over a machine's own, whatever PATH jest was started with. Workers inherit it.
 */
process.env.PATH = [path.join(__dirname, '.tools/bin'), process.env.PATH].join(path.delimiter);

module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/libs', '<rootDir>/src', '<rootDir>/test'],
  testMatch: ['**/*.spec.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { diagnostics: false }],
    '^.+\\.m?js$': [
      '<rootDir>/test/jest/esm-to-cjs.transform.js',
      { diagnostics: false, tsconfig: { allowJs: true, module: 'commonjs', target: 'ES2022', esModuleInterop: true } },
    ],
  },
  moduleNameMapper: {
    // The libraries by name, as package.json's `imports` maps them for the built code (tsconfig's `paths` for tsc).
    '^#libs/([a-z-]+)$': '<rootDir>/libs/$1/src',
    '^#libs/([a-z-]+)/(.*)$': '<rootDir>/libs/$1/src/$2',
    ...SCHEMA_PACKAGE_FILES,
    // The console's browser modules import the shared event sentences by the .js name the browser loads.
    '^\\.\\./\\.\\./common/texts/([a-z-]+)\\.js$': '<rootDir>/src/common/texts/$1',
  },
  // Whatever an @octokit package keeps in its own node_modules is transformed too (content-type 3, an ES module,
  // sits under @octokit/request while the top-level content-type 2 that express uses is CommonJS and left alone).
  transformIgnorePatterns: [`/node_modules/(?<!/@octokit/[a-z-]+/node_modules/)(?!(${ESM_PACKAGES.join('|')})/)`],
  // A hang guard, not a speed check: a generator test that builds every phase with kubectl took over 60 s on a
  // machine running two suites and benchmarks at once (load average 20 on two cores).
  testTimeout: 120000,
  maxWorkers: 2,
};
