/**
 * Chat templates: a conversation rendered to the prompt text a model was trained on, by the Jinja
 * template its folder ships (tokenizer_config.json's `chat_template`, or `chat_template.jinja`),
 * or by our built-in ChatML template for models that have none.
 */
import { Template } from '@huggingface/jinja';
import { firstLine, ModelError } from '../errors';
import BUILTIN_TEMPLATE_TEXT from './chat_template.jinja' with { type: 'text' };

/** The ChatML layout of Qwen2.5: `<|im_start|>role\n...<|im_end|>\n`, with a default system message. */
export const BUILTIN_CHAT_TEMPLATE: string = BUILTIN_TEMPLATE_TEXT;

export interface TemplateMessage {
  role: string;
  content: string;
  [key: string]: unknown;
}

export interface ChatTemplateOptions {
  /** End with the opening of an assistant turn, for the model to continue. */
  addGenerationPrompt?: boolean;
  /** Tool schemas, for templates that list them (Qwen's do). */
  tools?: readonly unknown[];
  /** Further template variables, e.g. `enable_thinking: false` for Qwen3, `bos_token`. */
  variables?: Record<string, unknown>;
}

const compiled = new Map<string, Template>();

function compile(template: string, source: string): Template {
  let parsed = compiled.get(template);
  if (!parsed) {
    try {
      parsed = new Template(template);
    } catch (error) {
      throw new ModelError(`${source}: chat template does not parse: ${firstLine(error)}`);
    }
    compiled.set(template, parsed);
  }
  return parsed;
}

/** Renders `messages` through `template`; `source` names where the template came from in errors. */
export function renderChatTemplate(
  template: string,
  messages: readonly TemplateMessage[],
  options: ChatTemplateOptions = {},
  source = 'chat template',
): string {
  const parsed = compile(template, source);
  try {
    return parsed.render({
      ...options.variables,
      messages,
      add_generation_prompt: options.addGenerationPrompt ?? false,
      ...(options.tools ? { tools: options.tools } : {}),
    });
  } catch (error) {
    throw new ModelError(`${source}: chat template failed to render: ${firstLine(error)}`);
  }
}

/** tokenizer_config.json's chat_template: a string, or a list of named templates (`default` is used). */
export function templateFromConfig(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) {
    const named = value as Array<{ name?: unknown; template?: unknown }>;
    const chosen = named.find((t) => t.name === 'default') ?? named[0];
    return typeof chosen?.template === 'string' ? chosen.template : null;
  }
  return null;
}
