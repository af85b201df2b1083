/** How gate messages write numbers: 3 decimals (1 from 10 up), signed, percentages. */
export const gateNumber = (x: number) => (Math.abs(x) >= 10 ? x.toFixed(1) : x.toFixed(3));
export const gateSigned = (x: number) => (x >= 0 ? `+${gateNumber(x)}` : gateNumber(x));
export const gatePercent = (x: number) => `${x >= 0 ? '+' : ''}${(100 * x).toFixed(1)}%`;
