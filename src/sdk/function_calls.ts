/**
 * Function calling as chat templates write it (Qwen2.5's and Hermes' layout): the tools are
 * listed in the system message as OpenAI function definitions, and the model calls one with
 *
 *   <tool_call>
 *   {"name": "calculator", "arguments": {"expression": "6*4"}}
 *   </tool_call>
 *
 * The JSON is written as the template's `tojson` filter writes it (Python's json.dumps: `", "`
 * and `": "` between items), so a call written here and an assistant message's `tool_calls`
 * rendered by the template are the same text, token for token. The tool_use env's `hermes`
 * format and the gateway (an outside agent's calls) both read and write calls through this file.
 */
import { Template } from '@huggingface/jinja';

type JsonSchema = { [key: string]: unknown };

/** A tool as OpenAI's chat API and chat templates take it. */
export interface OpenAiTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: JsonSchema };
}

export function openAiTool(name: string, description: string, parameters: JsonSchema): OpenAiTool {
  return { type: 'function', function: { name, description, parameters } };
}

const TOJSON = new Template('{{ value | tojson }}');

/** `value` as a chat template's tojson filter writes it. */
export function templateJson(value: unknown): string {
  return TOJSON.render({ value });
}

/** One call in the template's layout: the text a model writes to call `name`. */
export function functionCallText(name: string, args: unknown): string {
  return `<tool_call>\n{"name": "${name}", "arguments": ${templateJson(args)}}\n</tool_call>`;
}

/** A call read from a reply: its name and arguments (an object), or why it could not be read. */
export type FunctionCall = { name: string; arguments: Record<string, unknown> } | { malformed: string };

export interface FunctionCallReply {
  /** The reply's text outside its calls, trimmed. */
  content: string;
  calls: FunctionCall[];
}

const CALL_SHAPE = '{"name": <function name>, "arguments": {...}}';

/** The `<tool_call>` blocks of a reply, in order, and the text around them. */
export function parseFunctionCalls(text: string): FunctionCallReply {
  const blocks = [...text.matchAll(/<tool_call>([\s\S]*?)<\/tool_call>/g)];
  const calls = blocks.map((block) => readCall(block[1]!));
  let content = text.replace(/<tool_call>[\s\S]*?<\/tool_call>/g, '');
  const unclosed = content.indexOf('<tool_call>');
  if (unclosed !== -1) {
    calls.push({ malformed: 'a <tool_call> is not closed with </tool_call>' });
    content = content.slice(0, unclosed);
  }
  return { content: content.trim(), calls };
}

function readCall(body: string): FunctionCall {
  const parsed = parseJsonLoosely(body.trim());
  if ('error' in parsed) return { malformed: `the tool call is not valid JSON (${parsed.error}); write ${CALL_SHAPE}` };
  const call = parsed.value as { name?: unknown; arguments?: unknown };
  if (typeof call !== 'object' || call === null || Array.isArray(call) || typeof call.name !== 'string' || call.name === '') {
    return { malformed: `a tool call is a JSON object ${CALL_SHAPE}` };
  }
  let args: unknown = call.arguments ?? {};
  // OpenAI's API carries arguments as a JSON string; a model may copy that
  if (typeof args === 'string') {
    const inner = parseJsonLoosely(args);
    if ('value' in inner) args = inner.value;
  }
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return { malformed: `the arguments of ${call.name} must be a JSON object` };
  return { name: call.name, arguments: args as Record<string, unknown> };
}

/** JSON as models write it: raw newlines and tabs inside strings are accepted. */
export function parseJsonLoosely(text: string): { value: unknown } | { error: string } {
  try {
    return { value: JSON.parse(text) };
  } catch (error) {
    try {
      return { value: JSON.parse(escapeControlCharactersInStrings(text)) };
    } catch {
      return { error: (error as Error).message.split('\n')[0]! };
    }
  }
}

function escapeControlCharactersInStrings(text: string): string {
  let out = '';
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (inString && c === '\\') {
      out += c + (text[i + 1] ?? '');
      i++;
    } else if (c === '"') {
      inString = !inString;
      out += c;
    } else if (inString && c === '\n') out += '\\n';
    else if (inString && c === '\r') out += '\\r';
    else if (inString && c === '\t') out += '\\t';
    else out += c;
  }
  return out;
}
