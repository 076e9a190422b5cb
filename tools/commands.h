/* Owns: the subcommands of the `fikit` command line tool. Each takes argv
 * without the program name (argv[0] is the subcommand) and returns the
 * process exit status: 0 success, 1 failure, 2 usage error (--help and an
 * unknown option exit from the shared option loop, tools/options.h). */
#ifndef FIKIT_TOOLS_COMMANDS_H
#define FIKIT_TOOLS_COMMANDS_H

int fikit_cmd_replay(int argc, char **argv);
int fikit_cmd_config(int argc, char **argv);
int fikit_cmd_status(int argc, char **argv);
int fikit_cmd_profile(int argc, char **argv);
int fikit_cmd_trace(int argc, char **argv);
int fikit_cmd_calibrate(int argc, char **argv);
int fikit_cmd_sim(int argc, char **argv);
int fikit_cmd_stop(int argc, char **argv);

/* Loads fikit.ini as every command does (config: -c, else the search
 * order). Returns 0, or -1 after printing "fikit CMD: <the error>". */
struct fikit_config;
int fikit_tool_config(const char *cmd, const char *config, struct fikit_config *cfg);

/* Connects to fikitd: socket_path if given, else the configured one. On
 * failure prints "fikit CMD: ..." and returns -1. */
int fikit_tool_connect(const char *cmd, const char *config, const char *socket_path);

#endif
