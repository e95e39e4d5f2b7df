export { VERSION } from '../libs/cli/src/version';
