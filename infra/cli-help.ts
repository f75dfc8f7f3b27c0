// Help text for the operator CLIs (infra/admin.ts, infra/paddle.ts): built from their command tables,
// one line per command, so a command added to a table is in the help without another edit.

export interface CommandHelp {
  /** The flags as a user types them, e.g. `--account <account_id> [--plan <plan>]`. */
  args: string;
  /** One short line: what the command does. */
  summary: string;
}

/** `name args`, the one-line usage of one command. */
export function commandUsage(program: string, name: string, command: CommandHelp): string {
  return `${program} ${name}${command.args ? ` ${command.args}` : ''}`;
}

/** The usage of one command, or a pointer to the help when `name` is none of the program's commands. */
export function usageOf(program: string, commands: Record<string, CommandHelp>, name: string | undefined): string {
  const command = name === undefined ? undefined : commands[name];
  return command && name !== undefined
    ? `usage: ${commandUsage(program, name, command)}`
    : `usage: ${program} <command> [flags]; \`npm run --silent ${program} -- help\` lists the commands`;
}

/** The whole help: what the program is, one line per command, then each command's flags and the notes. */
export function formatHelp(program: string, intro: string, commands: Record<string, CommandHelp>, notes: string[]): string {
  const names = Object.keys(commands);
  const width = Math.max(...names.map((n) => n.length)) + 2;
  const lines = [
    `usage: npm run --silent ${program} -- <command> [flags]`,
    '',
    intro,
    '',
    'commands:',
    ...names.map((n) => `  ${n.padEnd(width)}${(commands[n] as CommandHelp).summary}`),
    '',
    'flags:',
    ...names.map((n) => `  ${commandUsage(program, n, commands[n] as CommandHelp)}`),
    '',
    ...notes,
  ];
  return `${lines.join('\n')}\n`;
}
