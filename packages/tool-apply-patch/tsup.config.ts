import { packageBuild } from '../../tools/config/tsup.ts';

// The helper process is a second entry; `shims` gives the CommonJS build an `import.meta.url`.
export default packageBuild({ entry: ['src/index.ts', 'src/apply-patch-helper.ts'], shims: true });
