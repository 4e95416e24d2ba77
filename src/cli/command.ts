/** What every subcommand module exports: citty's definition plus the help text after its options. */
import type { ArgsDef, CommandDef } from 'citty';

export interface Command<T extends ArgsDef = ArgsDef> {
  def: CommandDef<T>;
  /** Printed after citty's usage by `--help`. */
  footer?: string;
}

export function command<const T extends ArgsDef>(def: CommandDef<T>, footer?: string): Command<T> {
  return { def, footer };
}
