/** `agentic eval`: validation rollouts of a checkpoint. */
import { validatingCommand } from './pending';

export default validatingCommand('eval', 'Evaluate a policy on the validation environments', 'evaluation', 'checkpoints and eval (issue #8)');
