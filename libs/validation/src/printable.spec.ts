import { printableLine, printableText } from './printable';

describe('printable text for terminals and text logs', () => {
  const hostile = 'a\u001b[2Jb\u009b31m\u202ec\u0000d\re\tf\ng\u2028h';

  it('keeps lines and tabs, and writes every other control character as its escape', () => {
    expect(printableText(hostile)).toBe('a\\u001b[2Jb\\u009b31m\\u202ec\\u0000d\\re\tf\ng\\u2028h');
  });

  it('as one line, line feeds are escaped too', () => {
    expect(printableLine(hostile)).toBe('a\\u001b[2Jb\\u009b31m\\u202ec\\u0000d\\re\tf\\ng\\u2028h');
  });

  it('leaves text without control characters as it is (accents, emoji, CJK)', () => {
    const plain = 'déjà vu 🚀 集群 [ok] ~/x';
    expect(printableText(plain)).toBe(plain);
    expect(printableLine(plain)).toBe(plain);
  });
});
