/** `agentic train`: the RL training loop. */
import { validatingCommand } from './pending';

export default validatingCommand(
  'train',
  'Train a policy with RL',
  'training',
  'the RL core (issue #6) and the warm-started tiny policies (issue #7)',
);
