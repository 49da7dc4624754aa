import { packageBuild } from '../../tools/config/tsup';

export default packageBuild();
