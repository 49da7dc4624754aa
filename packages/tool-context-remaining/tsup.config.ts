import { packageBuild } from '@switchyard/config/tsup';

export default packageBuild();
