import { packageBuild } from '../../tools/config/tsup.ts';

export default packageBuild();
