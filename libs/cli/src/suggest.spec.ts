import { argumentError, closest } from './suggest';

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

  it('adds the suggestion to parseArgs errors', () => {
    expect(
      argumentError(
        new Error(
          "Unknown option '--infra-onyl'. To specify a positional argument starting with a '-', place it at the end of the command after '--', as in '-- \"--infra-onyl\"\n",
        ),
        ['infra-only', 'repo'],
      ),
    ).toMatch(/^Unknown option '--infra-onyl'.*; did you mean --infra-only\?$/);
  });
});
