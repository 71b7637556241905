/** Epoch milliseconds (as stored) to the ISO-8601 string the API answers with. */
export const iso = (ms: number) => new Date(Number(ms)).toISOString();
