/* Owns: the option loop every `fikit` subcommand shares. A command lists
 * its options as a table, where each one lands (a string or a flag), and
 * gets --help/-h and the usage-error exit of every command written once. */
#ifndef FIKIT_TOOLS_OPTIONS_H
#define FIKIT_TOOLS_OPTIONS_H

#include <stdbool.h>
#include <stdio.h>

/* One option: its long name and short letter (or a code above 255 for a
 * long-only option). An option with an argument stores it in *str (the
 * command checks and converts it after the loop); one without sets *flag.
 * A table ends with a row whose name is NULL. */
struct fikit_tool_opt {
    const char *name;
    int key;
    const char **str;
    bool *flag;
};

#define FIKIT_OPT(name, key, str) {(name), (key), (str), NULL}
#define FIKIT_FLAG(name, key, flag) {(name), (key), NULL, (flag)}

/* Parses argv (argv[0] the subcommand) against opts and --help, and
 * returns the index of the first operand. --help prints usage to stdout and
 * exits 0; an unknown option or a missing argument prints it to stderr and
 * exits 2 (the exit status of every command's usage error). */
int fikit_tool_options(int argc, char **argv, const struct fikit_tool_opt *opts,
                       void (*usage)(FILE *));

#endif
