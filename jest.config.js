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
