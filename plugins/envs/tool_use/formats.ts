/**
 * The three ways a policy can write tool calls (after AgentFly's agent types; the wording is ours):
 *
 * - json: Qwen/Hermes style, `<tool_call>{"name": ..., "arguments": {...}}</tool_call>`, several
 *   per reply allowed; results come back in `<tool_response>` blocks.
 * - react: `Thought:` / `Action: <tool>` / `Input: <JSON object, or plain text for a tool with one
 *   text parameter>`, one call per reply; results come back as `Observation:`; `Answer:` finishes.
 * - code: one fenced ```python block per reply, run with the code tool; other tools may still be
 *   called with `<tool_call>` blocks.
 * - hermes: function calling through the model's chat template. The tools go to the template,
 *   which lists them in the system message; calls are `<tool_call>` blocks written exactly as the
 *   template renders an assistant's tool_calls, and results come back as tool messages. The same
 *   tokens an agent gets through the gateway's /v1/chat/completions with `tools` (docs/agents.md).
 *   A reply whose call cannot be read is the final answer, as an OpenAI-style server returns it
 *   as plain content.
 * - compact: one call per reply written as the tool's name and its input in parentheses,
 *   `calculator(6*4+4*11)`; the result comes back as it is, with nothing around it. For small
 *   policies on a CPU, where every generated token counts (configs/calculator.yaml).
 *
 * A reply with no tool call is the final answer: the text of its `<answer>` tags (or `Answer:` line
 * in react), else the whole reply. Chat special tokens and `<think>` blocks are not part of a reply.
 */
import { CHAT_SPECIAL_TOKENS, functionCallText, parseFunctionCalls, parseJsonLoosely } from 'agentic';
import type { CallOutcome, CallRequest } from './calls';
import type { ToolSpec } from './tools';

export const AGENT_FORMATS = ['json', 'hermes', 'react', 'code', 'compact'] as const;
export type AgentFormatName = (typeof AGENT_FORMATS)[number];

export type ParsedResponse = { kind: 'calls'; calls: CallRequest[] } | { kind: 'answer'; answer: string };

/** The tool that runs ```python blocks, and the parameter the code goes to. */
export interface CodeTool {
  tool: ToolSpec;
  parameter: string;
}

export interface AgentFormat {
  /** How to call tools and how to finish, for the instruction (the tool list is added after it). */
  readonly guide: string;
  parse(response: string): ParsedResponse;
  /** The next turn's observation: every call's output, in order. */
  observation(outcomes: readonly CallOutcome[]): string;
  /** A well-formed reply that calls `tool` with `args`. */
  callText(tool: ToolSpec, args: Record<string, unknown>): string;
  /** A well-formed reply that gives the final answer. */
  answerText(answer: string): string;
  /** The chat template lists the tools and shows their results as tool messages (hermes). */
  readonly templateTools?: true;
}

export interface FormatOptions {
  tools: readonly ToolSpec[];
  /** Needed by the code format. */
  codeTool: CodeTool | null;
  maxTurns: number;
}

export function agentFormat(name: AgentFormatName, options: FormatOptions): AgentFormat {
  switch (name) {
    case 'json':
      return jsonFormat(options);
    case 'hermes':
      return hermesFormat(options);
    case 'react':
      return reactFormat(options);
    case 'compact':
      return compactFormat(options);
    case 'code':
      if (!options.codeTool) throw new Error('the code format needs a code tool');
      return codeFormat(options, options.codeTool);
  }
}

// ---------------------------------------------------------------------------------------------
// json

function jsonFormat(options: FormatOptions): AgentFormat {
  return {
    guide: [
      'You can call tools to help you. To call one, write a JSON object with its name and arguments between <tool_call> and </tool_call>:',
      '<tool_call>',
      '{"name": "tool_name", "arguments": {"parameter": "value"}}',
      '</tool_call>',
      'You may call several tools in one reply, one <tool_call> block each. Their results come back in the next message, each between <tool_response> and </tool_response>.',
      finishing(options, 'without a tool call'),
    ].join('\n'),
    parse(response) {
      const text = cleanReply(response);
      const calls = toolCallBlocks(text);
      return calls.length > 0 ? { kind: 'calls', calls } : { kind: 'answer', answer: taggedAnswer(text) ?? text };
    },
    observation: (outcomes) => outcomes.map(toolResponse).join('\n'),
    callText: toolCallText,
    answerText: (answer) => `<answer>${answer}</answer>`,
  };
}

// ---------------------------------------------------------------------------------------------
// hermes

function hermesFormat(options: FormatOptions): AgentFormat {
  return {
    guide: finishing(options, 'without a tool call').replace(' between <answer> and </answer>', ''),
    templateTools: true,
    parse(response) {
      const text = cleanReply(response);
      const calls: CallRequest[] = [];
      for (const call of parseFunctionCalls(text).calls) {
        if ('malformed' in call) return { kind: 'answer', answer: taggedAnswer(text) ?? text };
        calls.push({ kind: 'call', name: call.name, args: call.arguments });
      }
      return calls.length > 0 ? { kind: 'calls', calls } : { kind: 'answer', answer: taggedAnswer(text) ?? text };
    },
    observation: (outcomes) => outcomes.map(toolResponse).join('\n'),
    callText: (tool, args) => functionCallText(tool.name, args),
    answerText: (answer) => answer,
  };
}

// ---------------------------------------------------------------------------------------------
// react

const REACT_LABEL = /^[ \t]*(thought|action input|action|input|final answer|answer|observation)[ \t]*:[ \t]?(.*)$/i;

interface ReactSection {
  label: 'thought' | 'action' | 'input' | 'answer' | 'observation';
  text: string;
}

function reactFormat(options: FormatOptions): AgentFormat {
  return {
    guide: [
      'Work step by step. In each reply, write what you think and then call one tool:',
      'Thought: what to do next',
      'Action: the name of one tool',
      "Input: the tool's arguments as a JSON object (a tool with a single text parameter also takes the text as it is)",
      'Then stop: the result comes back in the next message as "Observation: ...". Repeat until you know the answer, then reply with:',
      'Thought: why this is the answer',
      'Answer: the final answer',
      finishing(options, 'without an Action', true),
    ].join('\n'),
    parse(response) {
      const text = cleanReply(response);
      const sections = reactSections(text);
      const observed = sections.findIndex((s) => s.label === 'observation');
      // a policy that writes its own Observation has only imagined the rest
      const own = observed === -1 ? sections : sections.slice(0, observed);
      const actions = own.filter((s) => s.label === 'action');
      if (actions.length > 1) {
        return { kind: 'calls', calls: [{ kind: 'malformed', name: null, error: `write one Action per reply; this reply has ${actions.length}` }] };
      }
      if (actions.length === 1) {
        const at = own.indexOf(actions[0]!);
        const input = own.slice(at + 1).find((s) => s.label === 'input');
        return { kind: 'calls', calls: [reactCall(actions[0]!.text, input?.text ?? '')] };
      }
      const answer = own.find((s) => s.label === 'answer');
      return { kind: 'answer', answer: answer ? answer.text.trim() : (taggedAnswer(text) ?? text) };
    },
    observation: (outcomes) => outcomes.map((o) => `Observation: ${o.output}`).join('\n'),
    callText: (tool, args) => `Thought: I will use ${tool.name}.\nAction: ${tool.name}\nInput: ${JSON.stringify(args)}`,
    answerText: (answer) => `Thought: I know the answer.\nAnswer: ${answer}`,
  };
}

function reactSections(text: string): ReactSection[] {
  const sections: ReactSection[] = [];
  for (const line of text.split('\n')) {
    const match = REACT_LABEL.exec(line);
    if (match) {
      const word = match[1]!.toLowerCase();
      const label = word === 'action input' ? 'input' : word === 'final answer' ? 'answer' : (word as ReactSection['label']);
      sections.push({ label, text: match[2]! });
    } else if (sections.length > 0) {
      sections.at(-1)!.text += `\n${line}`;
    }
  }
  return sections;
}

function reactCall(actionText: string, inputText: string): CallRequest {
  const name = actionText
    .trim()
    .replace(/^[`'"*]+|[`'"*]+$/g, '')
    .trim();
  if (name === '') return { kind: 'malformed', name: null, error: 'the Action line names no tool' };
  const input = inputText
    .trim()
    .replace(/^```[a-z]*\n([\s\S]*?)\n?```$/i, '$1')
    .trim();
  if (input === '') return { kind: 'call', name, args: {} };
  if (!input.startsWith('{')) return { kind: 'call', name, args: input };
  // words after the object are the policy talking on, not part of the input
  const parsed = parseJsonLoosely(input.slice(0, input.lastIndexOf('}') + 1));
  if ('error' in parsed) return { kind: 'malformed', name, error: `the Input of ${name} is not valid JSON (${parsed.error})` };
  return { kind: 'call', name, args: parsed.value };
}

// ---------------------------------------------------------------------------------------------
// compact

/** A whole reply that is one call: `name(input)`. */
const COMPACT_CALL = /^([A-Za-z_][\w-]*)\(([\s\S]*)\)$/;
/** A reply that starts like a call, whether or not it ends like one. */
const COMPACT_OPENING = /^[A-Za-z_][\w-]*\(/;

function compactFormat(options: FormatOptions): AgentFormat {
  const example = options.tools[0]?.name ?? 'tool_name';
  return {
    guide: [
      `To call a tool, reply with its name and its input in parentheses and nothing else, e.g. ${example}(12*3+4); a tool with several parameters takes a JSON object, name({"parameter": "value"}). The result comes back in the next message.`,
      finishing(options, 'without a call'),
    ].join('\n'),
    parse(response) {
      const text = cleanReply(response);
      const call = COMPACT_CALL.exec(text);
      if (call) return { kind: 'calls', calls: [compactCall(call[1]!, call[2]!)] };
      if (COMPACT_OPENING.test(text) && taggedAnswer(text) === null) {
        return {
          kind: 'calls',
          calls: [{ kind: 'malformed', name: null, error: 'a call is the whole reply: name(input), ending with its closing parenthesis' }],
        };
      }
      return { kind: 'answer', answer: taggedAnswer(text) ?? text };
    },
    observation: (outcomes) => outcomes.map((o) => o.output).join('\n'),
    callText: (tool, args) => {
      const keys = Object.keys(args);
      const plain = tool.textParameter !== null && keys.length === 1 && keys[0] === tool.textParameter && typeof args[tool.textParameter] === 'string';
      return `${tool.name}(${plain ? String(args[tool.textParameter!]) : JSON.stringify(args)})`;
    },
    answerText: (answer) => `<answer>${answer}</answer>`,
  };
}

function compactCall(name: string, inputText: string): CallRequest {
  const input = inputText.trim();
  if (!input.startsWith('{')) return { kind: 'call', name, args: input };
  const parsed = parseJsonLoosely(input);
  // not JSON after all: plain text that happens to start with a brace
  return 'error' in parsed ? { kind: 'call', name, args: input } : { kind: 'call', name, args: parsed.value };
}

// ---------------------------------------------------------------------------------------------
// code

const PYTHON_BLOCK = /```(?:python|py)[^\S\n]*\n([\s\S]*?)```/g;
const PYTHON_FENCE = /```(?:python|py)\b/g;

function codeFormat(options: FormatOptions, code: CodeTool): AgentFormat {
  const others = options.tools.filter((t) => t.name !== code.tool.name);
  return {
    guide: [
      'Solve the problem by writing Python code. In each reply write one block of code between ```python and ```; ' +
        `it is run with ${code.tool.name} and its output comes back in the next message. ` +
        'Take one step at a time rather than solving everything in one block.',
      ...(others.length > 0
        ? [
            `You can also call the other tools by writing a JSON object between <tool_call> and </tool_call>, e.g. <tool_call>{"name": "${others[0]!.name}", "arguments": {...}}</tool_call>.`,
          ]
        : []),
      finishing(options, 'without code'),
    ].join('\n'),
    parse(response) {
      const text = cleanReply(response);
      const blocks = [...text.matchAll(PYTHON_BLOCK)];
      const fences = text.match(PYTHON_FENCE)?.length ?? 0;
      const calls: CallRequest[] = [];
      if (fences > blocks.length) calls.push({ kind: 'malformed', name: code.tool.name, error: 'a ```python block is not closed with ```' });
      else if (blocks.length > 1) {
        calls.push({ kind: 'malformed', name: code.tool.name, error: `write one \`\`\`python block per reply; this reply has ${blocks.length}` });
      } else if (blocks.length === 1) calls.push({ kind: 'call', name: code.tool.name, args: { [code.parameter]: blocks[0]![1]!.trim() } });
      calls.push(...toolCallBlocks(text.replace(PYTHON_BLOCK, '')));
      return calls.length > 0 ? { kind: 'calls', calls } : { kind: 'answer', answer: taggedAnswer(text) ?? text };
    },
    observation: (outcomes) => outcomes.map((o) => (o.name === code.tool.name ? `Output:\n\`\`\`\n${o.output}\n\`\`\`` : toolResponse(o))).join('\n'),
    callText: (tool, args) => (tool.name === code.tool.name ? `\`\`\`python\n${String(args[code.parameter])}\n\`\`\`` : toolCallText(tool, args)),
    answerText: (answer) => `<answer>${answer}</answer>`,
  };
}

// ---------------------------------------------------------------------------------------------
// shared parts

/** The last paragraph of every guide: how to finish, and how many replies there are. */
function finishing(options: FormatOptions, plainly: string, react = false): string {
  const direct = react ? `reply with an Answer line, ${plainly}` : `reply with it between <answer> and </answer>, ${plainly}`;
  const terminal = options.tools.filter((t) => t.terminal).map((t) => t.name);
  const how = terminal.length > 0 ? `call ${terminal.join(' or ')} with it (or ${direct})` : direct;
  return `When you know the final answer, ${how}. You have ${options.maxTurns} ${options.maxTurns === 1 ? 'reply' : 'replies'} in all.`;
}

/** The reply without chat special tokens and thinking. */
function cleanReply(response: string): string {
  let text = response;
  for (const token of CHAT_SPECIAL_TOKENS) text = text.split(token).join('');
  text = text.replace(/<think>[\s\S]*?<\/think>/g, '');
  // a chat template may open the thinking block itself, leaving only its end in the reply
  const end = text.indexOf('</think>');
  if (end !== -1 && !text.slice(0, end).includes('<think>')) text = text.slice(end + '</think>'.length);
  return text.trim();
}

function taggedAnswer(text: string): string | null {
  const tagged = [...text.matchAll(/<answer>([\s\S]*?)<\/answer>/g)];
  return tagged.length > 0 ? tagged.at(-1)![1]!.trim() : null;
}

function toolCallBlocks(text: string): CallRequest[] {
  const blocks = [...text.matchAll(/<tool_call>([\s\S]*?)<\/tool_call>/g)];
  const calls = blocks.map((block) => readToolCall(block[1]!));
  const opened = text.match(/<tool_call>/g)?.length ?? 0;
  if (opened > blocks.length) calls.push({ kind: 'malformed', name: null, error: 'a <tool_call> is not closed with </tool_call>' });
  return calls;
}

const CALL_SHAPE = '{"name": <tool name>, "arguments": {...}}';

function readToolCall(body: string): CallRequest {
  const parsed = parseJsonLoosely(body.trim().replace(/^```(?:json)?[^\S\n]*\n([\s\S]*?)\n?```$/, '$1'));
  if ('error' in parsed) return { kind: 'malformed', name: null, error: `the tool call is not valid JSON (${parsed.error}); write ${CALL_SHAPE}` };
  const call = parsed.value as { name?: unknown; arguments?: unknown };
  if (typeof call !== 'object' || call === null || Array.isArray(call) || typeof call.name !== 'string' || call.name === '') {
    return { kind: 'malformed', name: null, error: `a tool call is a JSON object ${CALL_SHAPE}` };
  }
  let args = call.arguments ?? {};
  if (typeof args === 'string') {
    // OpenAI-style arguments are a JSON string; anything else is plain text for the tool
    const inner = parseJsonLoosely(args);
    if (!('error' in inner) && typeof inner.value === 'object' && inner.value !== null && !Array.isArray(inner.value)) args = inner.value;
  }
  return { kind: 'call', name: call.name, args };
}

function toolCallText(tool: ToolSpec, args: Record<string, unknown>): string {
  return `<tool_call>\n${JSON.stringify({ name: tool.name, arguments: args })}\n</tool_call>`;
}

function toolResponse(outcome: CallOutcome): string {
  return `<tool_response>\n${outcome.output}\n</tool_response>`;
}
