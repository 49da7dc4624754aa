import { packageBuild } from '@switchyard/config/tsup';

// `@modelcontextprotocol/ext-tasks` ships ES modules only (no `require` export): it is bundled,
// so the CommonJS build can load it too.
export default packageBuild({ noExternal: [/^@modelcontextprotocol\/ext-tasks/] });
