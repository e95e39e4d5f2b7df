/**
 * Tests run against real NATS JetStream, PostgreSQL, git and kubectl; see .ci/run.
 * @kubernetes/client-node 1.x and its OIDC dependencies ship only ES modules: jest (CommonJS)
 * gets them transpiled by ts-jest; plain Node 20.19+ loads them through require(esm).
 */
const ESM_PACKAGES = [
  '@nestjs',
  'file-type',
  'strtok3',
  'token-types',
  '@tokenizer',
  'uint8array-extras',
  '@kubernetes/client-node',
  'openid-client',
  'oauth4webapi',
  'jose',
  'age-encryption',
  '@noble',
  '@scure',
];

module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/libs', '<rootDir>/src', '<rootDir>/test'],
  testMatch: ['**/*.spec.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { diagnostics: false }],
    '^.+\\.m?js$': ['<rootDir>/test/jest/esm-to-cjs.transform.js', { diagnostics: false, tsconfig: { allowJs: true, module: 'commonjs', target: 'ES2022', esModuleInterop: true } }],
  },
  transformIgnorePatterns: [`/node_modules/(?!(${ESM_PACKAGES.join('|')})/)`],
  testTimeout: 60000,
  maxWorkers: 2,
};
