#include "tools/options.h"

#include <getopt.h>
#include <stddef.h>
#include <stdlib.h>

#define MAX_OPTS 32

int fikit_tool_options(int argc, char **argv, const struct fikit_tool_opt *opts,
                       void (*usage)(FILE *))
{
    struct option longs[MAX_OPTS + 2];
    char shorts[3 * MAX_OPTS + 2];
    size_t n = 0, s = 0;
    for (; opts[n].name && n < MAX_OPTS; n++) {
        longs[n] = (struct option){opts[n].name, opts[n].str ? required_argument : no_argument,
                                   NULL, opts[n].key};
        if (opts[n].key < 256) {
            shorts[s++] = (char)opts[n].key;
            if (opts[n].str)
                shorts[s++] = ':';
        }
    }
    longs[n] = (struct option){"help", no_argument, NULL, 'h'};
    longs[n + 1] = (struct option){0, 0, 0, 0};
    shorts[s++] = 'h';
    shorts[s] = '\0';
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
        if (c == 'h') {
            usage(stdout);
            exit(0);
        }
        size_t i = 0;
        while (i < n && opts[i].key != c)
            i++;
        if (i == n) {
            usage(stderr);
            exit(2);
        }
        if (opts[i].str)
            *opts[i].str = optarg;
        else
            *opts[i].flag = true;
    }
    return optind;
}
