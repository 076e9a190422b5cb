/* fikitd: the fikit scheduler daemon. One per node; one scheduler per
 * device. See fikitd --help. */
#include "conf/config.h"
#include "core/clock.h"
#include "core/log.h"
#include "fikitd/server.h"
#include "fikitd/daemon_files.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: fikitd [OPTIONS]\n"
            "\n"
            "The fikit scheduler daemon. Programs started with fikit-launch register with it at\n"
            "their first GPU use; per device it keeps the tasks, their priorities and held\n"
            "launches, and grants lower-priority kernels into the idle gaps of higher-priority\n"
            "tasks (policy fill), only when they are idle (strict), or always (passthrough).\n"
            "\n"
            "Control socket: [daemon] socket in fikit.ini; by default\n"
            "$XDG_RUNTIME_DIR/fikit/fikitd.sock, or /run/fikit/fikitd.sock as root.\n"
            "\n"
            "Options:\n"
            "  -c, --config FILE      read this fikit.ini (else $FIKIT_CONFIG,\n"
            "                         $XDG_CONFIG_HOME/fikit/fikit.ini, /etc/fikit/fikit.ini)\n"
            "  -f, --foreground       stay in the foreground and log to stderr (for systemd);\n"
            "                         otherwise fikitd detaches once its socket is ready,\n"
            "                         says its pid, socket and log, logs to\n"
            "                         STATE_DIR/fikitd.log and writes its pid to\n"
            "                         STATE_DIR/fikitd.pid (removed when it stops)\n"
            "  -s, --socket PATH      listen on PATH instead of the configured socket\n"
            "  -l, --log-level LEVEL  error, warn, info, debug or trace (default: fikit.ini)\n"
            "      --trace            record scheduling events from the start (see fikit trace)\n"
            "      --check-config     validate the configuration, print it, and exit\n"
            "  -h, --help             show this help\n"
            "      --version          show the version\n"
            "\n"
            "Signals: SIGTERM or SIGINT release every held launch (programs continue\n"
            "unscheduled) and stop the daemon; SIGHUP is ignored.\n"
            "\n"
            "Exit status: 0 after a clean shutdown, 1 on a configuration or socket error,\n"
            "2 on a usage error.\n");
}

/* Detaching: the parent says where the daemon is (pid, socket, log, pid
 * file) once the child is ready, so a user knows how to reach and stop it. */
static int detach(const char *log_path, const char *socket_path, const char *pid_path)
{
    int pipefd[2];
    if (pipe(pipefd) != 0)
        return -errno;
    pid_t pid = fork();
    if (pid < 0)
        return -errno;
    if (pid > 0) {
        /* The parent returns once the child is ready, so `fikitd && client`
         * never races the socket. */
        close(pipefd[1]);
        char ok = 0;
        ssize_t n = read(pipefd[0], &ok, 1);
        if (n == 1 && ok == 'y')
            printf("fikitd: running as pid %d, listening on %s; log %s, pid file %s; stop it with "
                   "kill %d (SIGTERM)\n", (int)pid, socket_path, log_path, pid_path, (int)pid);
        else
            fprintf(stderr, "fikitd: did not start: see %s\n", log_path);
        fflush(stdout);
        _exit(n == 1 && ok == 'y' ? 0 : 1);
    }
    close(pipefd[0]);
    setsid();
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    int log = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
    if (null >= 0) {
        dup2(null, 0);
        dup2(null, 1);
    }
    if (log >= 0)
        dup2(log, 2);
    else if (null >= 0)
        dup2(null, 2);
    return pipefd[1];
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"config", required_argument, 0, 'c'}, {"foreground", no_argument, 0, 'f'},
        {"socket", required_argument, 0, 's'}, {"log-level", required_argument, 0, 'l'},
        {"trace", no_argument, 0, 'T'},        {"check-config", no_argument, 0, 'C'},
        {"help", no_argument, 0, 'h'},         {"version", no_argument, 0, 'V'},
        {0, 0, 0, 0}};
    const char *config = NULL, *socket_path = NULL, *level = NULL;
    int foreground = 0, check = 0, trace = 0, c;
    while ((c = getopt_long(argc, argv, "c:fs:l:h", opts, NULL)) != -1) {
        switch (c) {
        case 'c': config = optarg; break;
        case 'f': foreground = 1; break;
        case 's': socket_path = optarg; break;
        case 'l': level = optarg; break;
        case 'T': trace = 1; break;
        case 'C': check = 1; break;
        case 'h': usage(stdout); return 0;
        case 'V': printf("fikitd %s\n", FIKIT_VERSION); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind != argc) {
        fprintf(stderr, "fikitd: unexpected argument '%s'\n\n", argv[optind]);
        usage(stderr);
        return 2;
    }
    static struct fikitd d;
    d.listen_fd = -1;
    struct fikit_err err;
    if (fikit_config_load(config, &d.cfg, &err)) {
        fprintf(stderr, "fikitd: %s\n", err.msg);
        return 1;
    }
    if (socket_path) {
        if (socket_path[0] != '/' || strlen(socket_path) >= sizeof d.cfg.socket_path) {
            fprintf(stderr, "fikitd: --socket %s: not an absolute path\n", socket_path);
            return 2;
        }
        snprintf(d.cfg.socket_path, sizeof d.cfg.socket_path, "%s", socket_path);
    }
    enum fikit_log_level lv = d.cfg.log_level;
    if (level && fikit_log_parse_level(level, &lv)) {
        fprintf(stderr, "fikitd: --log-level %s: unknown (accepted: %s)\n", level, FIKIT_LOG_LEVEL_NAMES);
        return 2;
    }
    fikit_log_set_level(lv);
    if (check) {
        char sock[PATH_MAX];
        fikit_config_socket_path(&d.cfg, sock, sizeof sock);
        printf("%s: valid; socket %s, policy %s, substrate %s, %d tasks\n",
               d.cfg.source[0] ? d.cfg.source : "(built-in defaults)", sock,
               fikit_policy_name(d.cfg.sched.policy), fikit_substrate_name(d.cfg.substrate), d.cfg.ntasks);
        return 0;
    }
    d.trace_at_start = trace;
    d.generation = fikit_now_ns() ^ ((uint64_t)getpid() << 40);
    if (fikitd_limits_init(&d)) {
        fprintf(stderr, "fikitd: cannot open /dev/null: %s\n", strerror(errno));
        return 1;
    }
    if (fikitd_listen(&d))
        return 1;

    int ready_fd = -1;
    char pid_path[PATH_MAX + 16] = "";
    if (!foreground) {
        char state[PATH_MAX], log_path[PATH_MAX + 16];
        fikit_config_state_dir(&d.cfg, state, sizeof state);
        mkdir(state, 0755);
        fikitd_state_file(&d.cfg, FIKITD_LOG_FILE, log_path, sizeof log_path);
        fikitd_state_file(&d.cfg, FIKITD_PID_FILE, pid_path, sizeof pid_path);
        ready_fd = detach(log_path, d.socket_path, pid_path);
        if (ready_fd < 0) {
            fprintf(stderr, "fikitd: cannot detach: %s\n", strerror(-ready_fd));
            return 1;
        }
    }
    fikit_info("fikitd %s listening on %s (configuration: %s)", FIKIT_VERSION, d.socket_path,
               d.cfg.source[0] ? d.cfg.source : "built-in defaults");
    if (ready_fd >= 0) {
        /* The pid file of a detached daemon: removed when it stops. */
        FILE *pf = fopen(pid_path, "w");
        if (pf) {
            fprintf(pf, "%d\n", (int)getpid());
            fclose(pf);
        } else {
            fikit_warn("cannot write %s: %s", pid_path, strerror(errno));
            pid_path[0] = '\0';
        }
        ssize_t w = write(ready_fd, "y", 1);
        (void)w;
        close(ready_fd);
    }
    int rc = fikitd_run(&d);
    fikitd_shutdown(&d);
    if (pid_path[0])
        unlink(pid_path);
    fikit_info("fikitd stopped");
    return rc;
}
