/* fikit: the command line front end over the core: status, profiles,
 * traces, replay, calibration and configuration checks. */
#include "tools/commands.h"

#include <stdio.h>
#include <string.h>

struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
};

static const struct command commands[] = {
    {"status", fikit_cmd_status, "show fikitd's devices, tasks, priorities, holds and grants"},
    {"profile", fikit_cmd_profile, "show what was measured about a task (kernels, gaps)"},
    {"trace", fikit_cmd_trace, "record scheduling events as Perfetto/Chrome trace JSON"},
    {"calibrate", fikit_cmd_calibrate, "measure this machine's context-switch cost for fikitd"},
    {"replay", fikit_cmd_replay, "replay a launch timeline through the policy and print decisions"},
    {"sim", fikit_cmd_sim, "model a service and a training job sharing a GPU under fikit's policy"},
    {"config", fikit_cmd_config, "check fikit.ini and print the configuration in effect"},
    {"stop", fikit_cmd_stop, "stop the fikitd this configuration names (its pid file)"},
};

#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *f)
{
    fprintf(f, "Usage: fikit COMMAND [OPTIONS] [ARGS]\n"
               "\n"
               "fikit schedules the kernels of programs that share a GPU by priority, filling\n"
               "the idle gaps of high-priority tasks with the kernels of lower ones.\n"
               "\n"
               "Commands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(f, "  %-12s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\n"
               "Run 'fikit COMMAND --help' for a command's options.\n"
               "See also: fikitd(8), fikit-launch(1), and the example conf/fikit.ini.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("fikit %s\n", FIKIT_VERSION);
        return 0;
    }
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "fikit: unknown command '%s'\n\n", argv[1]);
    usage(stderr);
    return 2;
}
