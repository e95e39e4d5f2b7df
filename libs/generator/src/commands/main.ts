/**
 * `generate-gitops-env`: a pass of a new cluster (`../cli`), or a command on an environment already scaffolded
 * (`drift`, `upgrade`, `retire`, `rotate`, built on the lifecycle folder). The commands sit above both: the generator's own folder never
 * imports the lifecycle that builds on it.
 */
import { main as passMain } from '../cli';
import { driftMain } from './drift-cli';
import { retireMain } from './retire-cli';
import { rotateMain } from './rotate-cli';
import { upgradeMain } from './upgrade-cli';

export function main(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  if (argv[0] === 'drift') return driftMain(argv.slice(1), env);
  if (argv[0] === 'upgrade') return upgradeMain(argv.slice(1), env);
  if (argv[0] === 'retire') return retireMain(argv.slice(1), env);
  if (argv[0] === 'rotate') return rotateMain(argv.slice(1), env);
  return passMain(argv, env);
}
