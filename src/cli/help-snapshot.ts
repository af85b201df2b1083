import type { EventEmitter } from 'node:events';
import { readFileSync } from 'node:fs';
import { Argument, Command, Option } from 'commander';

/**
 * Help texts without the command modules. `npm run build` writes the whole command tree (every
 * command's name, description, arguments, options and extra help text, as data) to
 * `dist/cli/help-snapshot.json` (tools/help-snapshot.mjs); `echolens <command…> --help` rebuilds
 * that tree with commander alone and lets commander print the help, at the terminal's width. A
 * command module pulls in what its actions use (providers, charts, schemas, Parquet, the store),
 * so a help text read from the modules took 1–2 s; from the snapshot it costs commander's load.
 * Anything but `<command words…> --help` (or a missing snapshot) takes the ordinary path, and
 * help-snapshot.test.ts checks every command's snapshot help against the ordinary one.
 */

const HELP_POSITIONS = ['beforeAll', 'before', 'after', 'afterAll'] as const;

/** Command fields (commander's own, underscored) that shape its help; copied as data. */
const COMMAND_FIELDS = [
  '_name',
  '_description',
  '_summary',
  '_usage',
  '_aliases',
  '_hidden',
  '_argsDescription',
  '_helpGroupHeading',
  '_defaultCommandGroup',
  '_defaultOptionGroup',
  '_addImplicitHelpCommand',
  '_versionOptionName',
  '_defaultCommandName',
  '_executableHandler',
  '_showHelpAfterError',
] as const;

export interface CommandSnapshot {
  fields: Record<string, unknown>;
  /** Commander's help configuration, without its functions (none of ours sets one below the root overview). */
  helpConfiguration: Record<string, unknown>;
  hasAction: boolean;
  options: Array<Record<string, unknown>>;
  arguments: Array<Record<string, unknown>>;
  /** The help option: its data, null when disabled, undefined for commander's default. */
  helpOption?: Record<string, unknown> | null;
  /** Extra help text by position (what `addHelpText` writes), as the listeners wrote it. */
  helpText: Partial<Record<(typeof HELP_POSITIONS)[number], string>>;
  commands: CommandSnapshot[];
}

type Loose = Record<string, unknown>;

/** The data fields of an option or argument (its parser and other functions left out). */
function dataOf(value: object): Loose {
  return Object.fromEntries(Object.entries(value).filter(([, field]) => typeof field !== 'function'));
}

/** The help-relevant data of a built command tree (JSON-serialisable). */
export function snapshotOf(command: Command): CommandSnapshot {
  const loose = command as unknown as Loose;
  const fields: Loose = {};
  for (const key of COMMAND_FIELDS) if (loose[key] !== undefined) fields[key] = loose[key];
  const helpConfiguration = dataOf((loose._helpConfiguration as Loose | undefined) ?? {});
  const helpText: CommandSnapshot['helpText'] = {};
  for (const position of HELP_POSITIONS) {
    let text = '';
    for (const listener of (command as unknown as EventEmitter).listeners(`${position}Help`)) {
      (listener as (context: unknown) => void)({ error: false, command, write: (s: string) => (text += s) });
    }
    if (text !== '') helpText[position] = text;
  }
  const helpOption = loose._helpOption as Option | null | undefined;
  return {
    fields,
    helpConfiguration,
    hasAction: loose._actionHandler !== null && loose._actionHandler !== undefined,
    options: command.options.map((o) => dataOf(o)),
    arguments: command.registeredArguments.map((a) => dataOf(a)),
    helpOption: helpOption === null ? null : helpOption === undefined ? undefined : dataOf(helpOption),
    helpText,
    commands: command.commands.map((c) => snapshotOf(c)),
  };
}

function noop(): void {}

/** A commander command tree equivalent, for help, to the one the snapshot was taken of. */
export function commandFromSnapshot(snapshot: CommandSnapshot, parent: Command | null = null): Command {
  const command = new Command();
  const loose = command as unknown as Loose;
  Object.assign(loose, snapshot.fields);
  loose._helpConfiguration = { ...snapshot.helpConfiguration };
  if (snapshot.hasAction) loose._actionHandler = noop;
  loose.options = snapshot.options.map((o) => Object.assign(Object.create(Option.prototype) as Option, o));
  const args = snapshot.arguments.map((a) => Object.assign(Object.create(Argument.prototype) as Argument, a));
  loose.registeredArguments = args;
  loose._args = args;
  if (snapshot.helpOption === null) loose._helpOption = null;
  else if (snapshot.helpOption !== undefined) loose._helpOption = Object.assign(Object.create(Option.prototype) as Option, snapshot.helpOption);
  for (const [position, text] of Object.entries(snapshot.helpText)) {
    (command as unknown as EventEmitter).on(`${position}Help`, (context: { write(s: string): void }) => context.write(text));
  }
  loose.parent = parent;
  loose.commands = snapshot.commands.map((c) => commandFromSnapshot(c, command));
  return command;
}

/** The snapshot command a command line asks help for (`persona run --help`), or null when the line is anything else. */
export function helpTarget(root: Command, args: readonly string[]): Command | null {
  if (args.length < 2) return null;
  const flag = args[args.length - 1] as string;
  const words = args.slice(0, -1);
  if (words.some((w) => w.startsWith('-')) || words[0] === 'help') return null;
  let command = root;
  for (const word of words) {
    const next = command.commands.find((c) => c.name() === word || c.aliases().includes(word));
    if (next === undefined) return null;
    command = next;
  }
  const helpOption = (command as unknown as Loose)._helpOption as Option | null | undefined;
  if (helpOption === null) return null;
  const flags = helpOption === undefined ? ['-h', '--help'] : [helpOption.short, helpOption.long];
  return flags.includes(flag) ? command : null;
}

/** Where the build writes the snapshot: beside this module. */
export const HELP_SNAPSHOT_FILE = new URL('./help-snapshot.json', import.meta.url);

/**
 * Prints the help a `<command…> --help` line asks for from the snapshot, and returns true; false
 * (nothing printed) when the line asks for something else or there is no snapshot.
 */
export function printHelpFromSnapshot(args: readonly string[], file: URL | string = HELP_SNAPSHOT_FILE): boolean {
  if (args.length < 2) return false;
  let snapshot: CommandSnapshot;
  try {
    snapshot = JSON.parse(readFileSync(file, 'utf8')) as CommandSnapshot;
  } catch {
    return false;
  }
  const target = helpTarget(commandFromSnapshot(snapshot), args);
  if (target === null) return false;
  target.outputHelp();
  return true;
}
