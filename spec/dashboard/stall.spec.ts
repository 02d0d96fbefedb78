import { stallThreshold } from '../../src/dashboard/stall';

describe('the stall threshold of the window gauge', () => {
  it('puts the threshold one intake batch (maxInFlight / 16, at least 1) below the window', () => {
    expect(stallThreshold(256)).toBe(240);
    expect(stallThreshold(16)).toBe(15);
    expect(stallThreshold(8)).toBe(7);
    expect(stallThreshold(1)).toBe(0);
  });
});
