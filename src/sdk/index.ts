/**
 * What a plugin imports: `import { defineEnv, z, Rng } from 'agentic'`.
 *
 * Plugins get these from the running agentic (also inside the compiled binary), so they share
 * its modules and never bundle their own copies. Everything here is public API.
 *
 * An env implements `Env`, and may also implement `WarmStartHooks` (extras for the warm start) and
 * `EvaluationHooks` (its episodes' optimum, for `agentic eval`). A game of two or more players
 * implements `SeatedEnv` and is defined with `defineSeatedEnv` (docs/multi_agent.md).
 * It need not check the order of calls (step() before reset(), a step after the end): agentic
 * drives every env through one guard that enforces it (src/sdk/guarded_env.ts).
 */
export { z } from 'zod';
/** The host's tfjs (the same engine and backends agentic computes with). */
export * as tf from '@tensorflow/tfjs-core';
export { Rng, hashSeed, type RngState } from '../engine/rng';
export { defineEnv, defineReward, defineSeatedEnv, defineTool } from './define';
export { epochOrder, rowAt } from './epochs';
export {
  ANSWER_PATTERN,
  actionPattern,
  envInstruction,
  THINK_ANSWER_PATTERN,
  CHAT_SPECIAL_TOKENS,
  parseAnswer,
  type ParseAnswerOptions,
  type ParsedAnswer,
} from './answer';
export {
  runPython,
  sandboxSupport,
  type PythonRunOptions,
  type PythonRunReason,
  type PythonRunResult,
  type PythonSandboxMode,
  type SandboxSupport,
} from '../sandbox/python';
export { createSearchTool, formatPassages, type SearchTool, type SearchToolOptions } from './retrieval/search_tool';
export { loadCorpus, parseJsonlCorpus, parseTextCorpus, type Passage } from './retrieval/corpus';
export { Bm25Index, tokenize, type Bm25Hit, type Bm25Options } from './retrieval/bm25';
export { scoreSafely, type SafeScore } from './score';
export { checkPackagesInstalled } from './package_imports';
export { runAgentCommand } from './agent_command';
export { loadAgentFunction } from './agent_module';
export {
  functionCallText,
  openAiTool,
  parseFunctionCalls,
  parseJsonLoosely,
  templateJson,
  type FunctionCall,
  type FunctionCallReply,
  type OpenAiTool,
} from './function_calls';
export { bindReward, RewardReference, rewardName, rewardSettings } from './reward_reference';
export { hasWarmStartHook } from './warm_start_hooks';
export type * from './types';
export { pluginTool, toolsFromConfig } from './agent_tools';
export { argumentsSchema, jsonSchemaCheck, textParameterOf } from './tool_schema';
export { ToolServerLost } from './mcp/connection';
export { McpPool } from './mcp/pool';
export {
  mcpServersIn,
  McpServerShape,
  McpToolEntryShape,
  serverLabel,
  toolEntries,
  ToolEntryShape,
  type McpServerConfig,
  type McpToolEntry,
  type ToolEntry,
} from './mcp/servers';
