/**
 * The errors a user can cause. Each carries the one line the CLI prints and the exit code it
 * exits with; anything else that reaches the top is a bug and is reported as one.
 */
export class AgenticError extends Error {
  readonly exitCode: number = 1;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** A command line that cannot be understood: unknown command, unknown flag, malformed argument. */
export class UsageError extends AgenticError {
  override readonly exitCode = 2;
}

/** A configuration that cannot be composed, resolved or validated. The message names the key. */
export class ConfigError extends AgenticError {
  override readonly exitCode = 2;
}

/** A plugin that cannot be found, loaded or used. The message names the file. */
export class PluginError extends AgenticError {
  override readonly exitCode = 2;
}

/** A model folder, weight file, tokenizer or hub download that cannot be read or used. The message names the file. */
export class ModelError extends AgenticError {
  override readonly exitCode = 2;
}

/** A checkpoint folder that cannot be resumed from: missing, incomplete or corrupt. The message names the folder. */
export class CheckpointError extends AgenticError {
  override readonly exitCode = 2;
}

/** A run that cannot go on (its policy diverged, or it learns from nothing). Not an input mistake: exit 1. */
export class TrainingError extends AgenticError {}

/**
 * Inference servers that cannot be used: none answers for longer than the run waits, one refuses
 * the weights sent, or one tokenizes differently from this process. The message names the server.
 */
export class InferenceError extends AgenticError {}

/** The first line of whatever was thrown, e.g. a parser's message without its code frame. */
export function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0]!.trim();
}

/** Flattens an error message to a single line, as the CLI prints it. */
export function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
}
