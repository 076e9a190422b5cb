/* fikit stop: stop the fikitd that fikit.ini's state directory names. */
#include "conf/config.h"
#include "core/clock.h"
#include "core/proto.h"
#include "tools/commands.h"
#include "fikitd/daemon_files.h"
#include "tools/options.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fprintf(f, "Usage: fikit stop [-c FILE] [-t SECONDS]\n"
               "\n"
               "Stops the fikitd that fikit.ini's state directory names (its fikitd.pid, which a\n"
               "detached fikitd writes): sends it SIGTERM, which releases every held launch (the\n"
               "programs go on unscheduled), and waits until it has exited. A fikitd run by\n"
               "systemd writes no pid file: stop it with `systemctl stop fikitd`.\n"
               "\n"
               "Options:\n"
               "  -c, --config FILE     use this fikit.ini\n"
               "  -t, --timeout SECONDS how long to wait for it to exit (default 20)\n"
               "  -h, --help            show this help\n"
               "\n"
               "Exit status: 0 once it has stopped, or if none was running; 1 if it is still\n"
               "running after the timeout, or a fikitd answers on the socket without a pid file;\n"
               "2 on a usage error.\n");
}

static bool gone(int pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d", pid);
    return access(path, F_OK) != 0;
}

int fikit_cmd_stop(int argc, char **argv)
{
    const char *path = NULL, *timeout_arg = NULL;
    const struct fikit_tool_opt opts[] = {FIKIT_OPT("config", 'c', &path), FIKIT_OPT("timeout", 't', &timeout_arg),
                                          {0}};
    int first = fikit_tool_options(argc, argv, opts, usage);
    if (first != argc) {
        usage(stderr);
        return 2;
    }
    double timeout = 20;
    if (timeout_arg) {
        char *end;
        timeout = strtod(timeout_arg, &end);
        if (*end || !(timeout > 0 && timeout <= 3600)) {
            fprintf(stderr, "fikit stop: --timeout %s: accepted: seconds, more than 0 and at most 3600\n",
                    timeout_arg);
            return 2;
        }
    }
    struct fikit_config cfg;
    if (fikit_tool_config("stop", path, &cfg))
        return 1;
    char pidfile[4096], sock[4096];
    fikitd_state_file(&cfg, FIKITD_PID_FILE, pidfile, sizeof pidfile);
    fikit_config_socket_path(&cfg, sock, sizeof sock);
    int pid = fikitd_running_pid(&cfg);
    if (!pid) {
        int fd = fikit_proto_connect(sock);
        if (fd >= 0) {
            close(fd);
            fprintf(stderr, "fikit stop: a fikitd answers on %s but %s names no running fikitd (started by "
                    "systemd? systemctl stop fikitd)\n", sock, pidfile);
            return 1;
        }
        printf("no fikitd is running (%s names none, nothing answers on %s)\n", pidfile, sock);
        return 0;
    }
    if (kill(pid, SIGTERM) != 0) {
        fprintf(stderr, "fikit stop: cannot signal fikitd (pid %d): %s\n", pid, strerror(errno));
        return 1;
    }
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        if (gone(pid)) {
            printf("fikitd (pid %d) stopped; the launches it held went on unscheduled\n", pid);
            return 0;
        }
        clock_gettime(CLOCK_MONOTONIC, &now);
        if ((double)(now.tv_sec - t0.tv_sec) + (double)(now.tv_nsec - t0.tv_nsec) * 1e-9 > timeout)
            break;
        nanosleep(&(struct timespec){0, (long)(20 * FIKIT_NS_PER_MS)}, NULL);
    }
    fprintf(stderr, "fikit stop: fikitd (pid %d) is still running after %g s (kill -KILL %d ends it at once)\n",
            pid, timeout, pid);
    return 1;
}
