import { errorTextOf } from '../../src/internal/text-of';

describe('errorTextOf', () => {
  it('gives an Error as its name and message', () => {
    expect(errorTextOf(new TypeError('bad'))).toBe('TypeError: bad');
  });

  it('never throws for an Error whose message is a Symbol or whose getters throw', () => {
    const symbolic = new Error('x');
    Object.defineProperty(symbolic, 'message', { value: Symbol('m') });
    expect(errorTextOf(symbolic)).toBe('Error: Symbol(m)');
    const hostile = new Error('x');
    Object.defineProperty(hostile, 'name', {
      get() {
        throw new Error('no name');
      },
    });
    expect(typeof errorTextOf(hostile)).toBe('string');
  });

  it('gives a value with no text form its tag', () => {
    expect(errorTextOf(Object.create(null))).toBe('[object Object]');
  });
});
