import { packageTest } from '../../tools/config/vitest.ts';

const long = process.env.RELIABILITY_PROFILE === 'long';

export default packageTest({ name: 'reliability', testTimeout: long ? 900_000 : 60_000 });
