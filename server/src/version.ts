import packageJson from '../../package.json';

/** The extension's version, from package.json (inlined into the bundles). */
export const VERSION: string = packageJson.version;
