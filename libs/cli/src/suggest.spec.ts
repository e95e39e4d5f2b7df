import { closest } from './suggest';

describe('did you mean', () => {
  it.each([
    ['infra-onyl', 'infra-only'],
    ['sealing-crt', 'sealing-cert'],
    ['stream-inf', 'stream-info'],
    ['rebuild-projecton', 'rebuild-projection'],
    ['xyz', undefined],
  ])('%s -> %s', (word, expected) => {
    expect(closest(word, ['infra-only', 'sealing-cert', 'stream-info', 'rebuild-projection', 'repo'])).toBe(expected);
  });
});
