/* Owns: the subcommands of the `fikit` command line tool. Each takes argv
 * without the program name (argv[0] is the subcommand) and returns the
 * process exit status: 0 success, 1 failure, 2 usage error. */
#ifndef FIKIT_TOOLS_COMMANDS_H
#define FIKIT_TOOLS_COMMANDS_H

int fikit_cmd_replay(int argc, char **argv);
int fikit_cmd_config(int argc, char **argv);

#endif
