#!/usr/bin/env bun
/**
 * The `agentic` command. Dispatches to one module per subcommand (citty definitions), and is the
 * one place errors are caught: a user's mistake prints one line and exits 2, a failure exits 1,
 * and stack traces appear only with --debug or AGENTIC_DEBUG=1.
 */
import { renderUsage, runCommand, type CommandDef } from 'citty';
import pkg from '../../package.json';
import { AgenticError, oneLine, UsageError } from '../errors';
import { didYouMean } from '../util/suggest';
import { normalizeFlagSpellings, rejectUnreadArguments, wantsHelp } from './args';
import type { Command } from './command';
import benchCommand from './bench';
import configCommand from './config';
import doctorCommand from './doctor';
import evalCommand from './eval';
import { log, out } from './log';
import mcpToolsCommand from './mcp_tools';
import playCommand from './play';
import pluginsCommand from './plugins';
import renderCommand from './render';
import resumeCommand from './resume';
import serveCommand from './serve';
import sftCommand from './sft';
import trainCommand from './train';
import workerCommand from './worker';

const COMMANDS: Record<string, Command> = {
  train: trainCommand as Command,
  sft: sftCommand as Command,
  eval: evalCommand as Command,
  render: renderCommand as Command,
  play: playCommand as Command,
  serve: serveCommand as Command,
  'mcp-tools': mcpToolsCommand as Command,
  worker: workerCommand as Command,
  resume: resumeCommand as Command,
  config: configCommand as Command,
  plugins: pluginsCommand as Command,
  doctor: doctorCommand as Command,
  bench: benchCommand as Command,
};

const ROOT: CommandDef = {
  meta: { name: 'agentic', version: pkg.version, description: 'Reinforcement learning for LLM agents, on tfjs' },
  args: {
    debug: { type: 'boolean', description: 'Show stack traces of errors (or set AGENTIC_DEBUG=1)' },
    version: { type: 'boolean', alias: ['v'], description: 'Print the version' },
  },
  subCommands: Object.fromEntries(Object.entries(COMMANDS).map(([name, c]) => [name, c.def])),
};

function debugWanted(argv: readonly string[]): boolean {
  return argv.includes('--debug') || ['1', 'true', 'yes'].includes((process.env.AGENTIC_DEBUG ?? '').toLowerCase());
}

async function printHelp(def: CommandDef, footer?: string): Promise<void> {
  let usage = await renderUsage(def, def === ROOT ? undefined : ROOT);
  if (!process.stdout.isTTY) usage = usage.replace(/\u001B\[\d+m/g, '');
  usage = usage.replace(/[ \t]+$/gm, '').trimEnd();
  out(footer ? `${usage}\n\n${footer}\n` : `${usage}\n`);
}

/** Runs the CLI on `argv` (without the program name) and returns the exit code. */
export async function runCli(argv: readonly string[]): Promise<number> {
  const debug = debugWanted(argv);
  try {
    const at = argv.findIndex((a) => !a.startsWith('-'));
    const rootFlags = at === -1 ? argv : argv.slice(0, at);
    rejectUnreadArguments(rootFlags, ROOT.args as never, 'agentic');
    if (at === -1) {
      if (rootFlags.includes('--version') || rootFlags.includes('-v')) out(`agentic ${pkg.version}`);
      else await printHelp(ROOT);
      return 0;
    }
    const name = argv[at]!;
    let command = COMMANDS[name];
    if (!command) {
      throw new UsageError(`unknown command '${name}'${didYouMean(name, Object.keys(COMMANDS))}; commands: ${Object.keys(COMMANDS).join(', ')}`);
    }
    let label = `agentic ${name}`;
    let words = argv.slice(at + 1);
    while (command.subcommands && words[0] !== undefined && Object.hasOwn(command.subcommands, words[0])) {
      label = `${label} ${words[0]}`;
      command = command.subcommands[words[0]]!;
      words = words.slice(1);
    }
    const rest = normalizeFlagSpellings(words, command.def.args as never);
    if (wantsHelp(rest)) {
      await printHelp(command.def, command.footer);
      return 0;
    }
    rejectUnreadArguments(rest, (command.def.args ?? {}) as never, label);
    const { result } = await runCommand(command.def, { rawArgs: [...rest] });
    return typeof result === 'number' ? result : 0;
  } catch (error) {
    return report(error, debug);
  }
}

/** Prints an error as one line (plus the stack with --debug) and returns its exit code. */
export function report(error: unknown, debug: boolean): number {
  if (error instanceof AgenticError) {
    log.error(oneLine(error.message));
    if (debug && error.stack) process.stderr.write(`${error.stack}\n`);
    return error.exitCode;
  }
  // citty's own argument errors (a missing value, a bad enum) are usage errors too
  if (error instanceof Error && error.name === 'CLIError') {
    log.error(oneLine(error.message.replace(/\u001B\[\d+m/g, '')));
    return 2;
  }
  const message = error instanceof Error ? error.message : String(error);
  log.error(`internal error: ${oneLine(message)}${debug ? '' : ' (run with --debug for the stack trace)'}`);
  if (debug && error instanceof Error && error.stack) process.stderr.write(`${error.stack}\n`);
  return 1;
}

if (import.meta.main) {
  const debug = debugWanted(process.argv);
  process.on('uncaughtException', (error) => process.exit(report(error, debug)));
  process.on('unhandledRejection', (error) => process.exit(report(error, debug)));
  process.on('SIGINT', () => {
    log.error('interrupted');
    process.exit(130);
  });
  process.exitCode = await runCli(process.argv.slice(2));
  // The command is done. A plugin call that timed out may still hold a timer of its own (the guard
  // stops waiting, it cannot cancel); do not let it keep the process alive. Unref'd, this timer
  // fires only if something else still does.
  setTimeout(() => process.exit(), 500).unref();
}
