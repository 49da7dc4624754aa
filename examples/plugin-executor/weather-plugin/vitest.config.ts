// Outside this repository `export default {}` (or no config at all) is enough: this one only adds
// the workspace's source condition, so the test runs against the packages' sources, unbuilt.
import { packageTest } from '@switchyard/config/vitest';

export default packageTest({ name: 'example-weather-plugin' });
