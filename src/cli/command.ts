/** What every subcommand module exports: citty's definition plus the help text after its options. */
import type { ArgsDef, CommandDef } from 'citty';

export interface Command<T extends ArgsDef = ArgsDef> {
  def: CommandDef<T>;
  /** Printed after citty's usage by `--help`. */
  footer?: string;
  /**
   * Commands selected by the first word after this one (`agentic plugins check ...`). We dispatch
   * them ourselves rather than through citty's subCommands, which would read any first positional
   * (such as a plugin path) as a command name.
   */
  subcommands?: Record<string, Command>;
}

export function command<const T extends ArgsDef>(def: CommandDef<T>, footer?: string, subcommands?: Record<string, Command>): Command<T> {
  return { def, footer, subcommands };
}
