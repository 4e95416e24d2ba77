/** `agentic render`: episodes to GIFs, transcripts and an HTML report. */
import { validatingCommand } from './pending';

export default validatingCommand('render', 'Render episodes to GIFs, transcripts and an HTML report', 'rendering', 'rendering and the HTML report (issue #8)');
