import { packageTest } from '@switchyard/config/vitest';

const long = process.env.RELIABILITY_PROFILE === 'long';

export default packageTest({ name: 'reliability', testTimeout: long ? 900_000 : 60_000 });
