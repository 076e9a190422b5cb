/* fikit trace: scheduling events as Chrome/Perfetto trace-event JSON. */
#include "conf/config.h"
#include "core/profile.h"
#include "core/proto.h"
#include "core/trace.h"
#include "tools/commands.h"
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
    fprintf(f, "Usage: fikit trace start|stop [-c FILE] [-s SOCKET]\n"
               "       fikit trace dump [-c FILE] [-s SOCKET] -o OUT.json\n"
               "       fikit trace record [-c FILE] [-s SOCKET] -o OUT.json [-t SECONDS]\n"
               "\n"
               "fikitd can record, per device, every launch (with the kernel's predicted end and\n"
               "the gap predicted after it), every hold, every grant (why, and the room it was\n"
               "fitted into), and each measured gap against the gap predicted for it.\n"
               "\n"
               "  start    begin recording (clears what was recorded)\n"
               "  stop     stop recording (what was recorded stays for dump)\n"
               "  dump     write what was recorded as trace-event JSON\n"
               "  record   start, wait SECONDS (default 10) or until Ctrl-C, dump, stop\n"
               "\n"
               "Open the file in https://ui.perfetto.dev or chrome://tracing: one process per\n"
               "device, one thread per task, kernels named from the tasks' profiles.\n"
               "\n"
               "Options:\n"
               "  -c, --config FILE    read the socket path and profile_dir from this fikit.ini\n"
               "  -s, --socket PATH    talk to the fikitd listening on PATH\n"
               "  -o, --output FILE    where dump and record write (- for standard output)\n"
               "  -t, --seconds N      how long record records\n"
               "  -h, --help           show this help\n"
               "\n"
               "Tracing is for root and the user fikitd runs as. Exit status: 0, 1 on failure.\n");
}

static int ctl(int fd, uint32_t op)
{
    struct fikit_msg_trace_ctl m = {.op = op};
    char buf[FIKIT_MSG_MAX];
    uint16_t type;
    if (fikit_proto_send(fd, FIKIT_MSG_TRACE_CTL, &m, sizeof m, -1) ||
        fikit_proto_recv(fd, buf, &type, NULL, 5000) < 0) {
        fprintf(stderr, "fikit trace: no answer from fikitd\n");
        return 1;
    }
    if (type == FIKIT_MSG_ERROR) {
        fprintf(stderr, "fikit trace: %s\n", ((struct fikit_msg_error *)fikit_proto_payload(buf))->text);
        return 1;
    }
    return 0;
}

/* Kernel names come from the tasks' profiles. */
struct namer {
    struct fikit_msg_trace_task tasks[64];
    struct fikit_measure_store stores[64];
    bool loaded[64];
    int ntasks;
    struct fikit_config cfg;
};

static const char *name_for(void *ctx, int slot, uint64_t key)
{
    struct namer *nm = ctx;
    for (int i = 0; i < nm->ntasks; i++) {
        if (nm->tasks[i].slot != slot || !nm->loaded[i])
            continue;
        const struct fikit_kernel_desc *d = fikit_measure_desc(&nm->stores[i], key);
        return d ? d->name : NULL;
    }
    return NULL;
}

/* What a dump gathers of one device before anything is written. */
struct dump_dev {
    uint32_t index;
    char model[128];
    struct namer nm;
    struct fikit_trace_event *ev;
    size_t n, cap;
};

static void free_devs(struct dump_dev *devs, int ndev)
{
    for (int k = 0; k < ndev; k++) {
        for (int i = 0; i < devs[k].nm.ntasks; i++)
            fikit_measure_destroy(&devs[k].nm.stores[i]);
        free(devs[k].ev);
    }
    free(devs);
}

static int dump(int fd, const char *out, struct fikit_config *cfg)
{
    if (fikit_proto_send(fd, FIKIT_MSG_TRACE_DUMP, NULL, 0, -1)) {
        fprintf(stderr, "fikit trace: fikitd closed the connection\n");
        return 1;
    }
    /* Collect everything first: tasks, then events, per device. */
    struct dump_dev *devs = calloc(16, sizeof *devs);
    if (!devs) {
        fprintf(stderr, "fikit trace: out of memory\n");
        return 1;
    }
    int ndev = 0;
    char buf[FIKIT_MSG_MAX];
    uint16_t type;
    for (;;) {
        int rc = fikit_proto_recv(fd, buf, &type, NULL, 10000);
        if (rc < 0) {
            fprintf(stderr, "fikit trace: no answer from fikitd: %s\n", strerror(-rc));
            free_devs(devs, ndev);
            return 1;
        }
        if (type == FIKIT_MSG_END)
            break;
        if (type == FIKIT_MSG_ERROR) {
            fprintf(stderr, "fikit trace: %s\n", ((struct fikit_msg_error *)fikit_proto_payload(buf))->text);
            free_devs(devs, ndev);
            return 1;
        }
        uint32_t di = type == FIKIT_MSG_TRACE_TASK
                          ? ((struct fikit_msg_trace_task *)fikit_proto_payload(buf))->device_index
                          : ((struct fikit_msg_trace_events *)fikit_proto_payload(buf))->device_index;
        int k;
        for (k = 0; k < ndev && devs[k].index != di; k++)
            ;
        if (k == ndev) {
            if (ndev == 16)
                continue;
            devs[k].index = di;
            devs[k].nm.cfg = *cfg;
            ndev++;
        }
        struct dump_dev *d = &devs[k];
        if (type == FIKIT_MSG_TRACE_TASK) {
            const struct fikit_msg_trace_task *t = fikit_proto_payload(buf);
            snprintf(d->model, sizeof d->model, "%s", t->device_model);
            if (d->nm.ntasks < 64) {
                int i = d->nm.ntasks++;
                d->nm.tasks[i] = *t;
                char dir[4096], path[4400];
                fikit_measure_init(&d->nm.stores[i]);
                if (!fikit_config_profile_dir(cfg, dir, sizeof dir) &&
                    !fikit_profile_path(path, sizeof path, dir, t->name, t->device_model))
                    d->nm.loaded[i] = fikit_profile_load(path, NULL, &d->nm.stores[i], NULL) == 0;
            }
        } else if (type == FIKIT_MSG_TRACE_EVENTS) {
            const struct fikit_msg_trace_events *m = fikit_proto_payload(buf);
            if (d->n + m->n > d->cap) {
                size_t cap = (d->n + m->n) * 2;
                struct fikit_trace_event *ev = realloc(d->ev, cap * sizeof *ev);
                if (!ev) {
                    fprintf(stderr, "fikit trace: out of memory after %zu events of device %u\n", d->n,
                            d->index);
                    free_devs(devs, ndev);
                    return 1;
                }
                d->ev = ev;
                d->cap = cap;
            }
            if (m->n) /* an empty chunk may come before any buffer */
                memcpy(d->ev + d->n, m->ev, m->n * sizeof *m->ev);
            d->n += m->n;
        }
    }
    FILE *f = strcmp(out, "-") ? fopen(out, "w") : stdout;
    if (!f) {
        fprintf(stderr, "fikit trace: cannot write %s: %s\n", out, strerror(errno));
        free_devs(devs, ndev);
        return 1;
    }
    fprintf(f, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"tool\":\"fikit %s\"},\n\"traceEvents\":[\n",
            FIKIT_VERSION);
    int first = 1;
    size_t total = 0;
    for (int k = 0; k < ndev; k++) {
        struct fikit_trace_task tt[64];
        for (int i = 0; i < devs[k].nm.ntasks; i++) {
            tt[i].slot = devs[k].nm.tasks[i].slot;
            tt[i].level = devs[k].nm.tasks[i].level;
            tt[i].pid = devs[k].nm.tasks[i].pid;
            snprintf(tt[i].name, sizeof tt[i].name, "%s", devs[k].nm.tasks[i].name);
        }
        fikit_trace_write_json(f, (int)devs[k].index, devs[k].model, devs[k].ev, devs[k].n, tt,
                               (size_t)devs[k].nm.ntasks, name_for, &devs[k].nm, &first);
        total += devs[k].n;
    }
    free_devs(devs, ndev);
    fprintf(f, "\n]}\n");
    if (f != stdout && fclose(f) != 0) {
        fprintf(stderr, "fikit trace: cannot write %s: %s\n", out, strerror(errno));
        return 1;
    }
    if (f != stdout)
        fprintf(stderr, "fikit trace: %zu events of %d device%s written to %s\n", total, ndev,
                ndev == 1 ? "" : "s", out);
    return 0;
}

static volatile sig_atomic_t interrupted;
static void on_int(int sig) { (void)sig; interrupted = 1; }

int fikit_cmd_trace(int argc, char **argv)
{
    const char *config = NULL, *sock = NULL, *out = NULL, *seconds_arg = NULL;
    const struct fikit_tool_opt opts[] = {
        FIKIT_OPT("config", 'c', &config), FIKIT_OPT("socket", 's', &sock),
        FIKIT_OPT("output", 'o', &out), FIKIT_OPT("seconds", 't', &seconds_arg), {0}};
    int first = fikit_tool_options(argc, argv, opts, usage);
    double seconds = seconds_arg ? atof(seconds_arg) : 10;
    if (first != argc - 1) {
        usage(stderr);
        return 2;
    }
    const char *verb = argv[first];
    bool needs_out = !strcmp(verb, "dump") || !strcmp(verb, "record");
    if (strcmp(verb, "start") && strcmp(verb, "stop") && !needs_out) {
        fprintf(stderr, "fikit trace: unknown action '%s' (accepted: start, stop, dump, record)\n", verb);
        return 2;
    }
    if (needs_out && !out) {
        fprintf(stderr, "fikit trace %s: -o OUT.json is required\n", verb);
        return 2;
    }
    struct fikit_config cfg;
    if (fikit_tool_config("trace", config, &cfg))
        return 1;
    int fd = fikit_tool_connect("trace", config, sock);
    if (fd < 0)
        return 1;
    int rc = 0;
    if (!strcmp(verb, "start"))
        rc = ctl(fd, FIKIT_TRACE_START);
    else if (!strcmp(verb, "stop"))
        rc = ctl(fd, FIKIT_TRACE_STOP);
    else if (!strcmp(verb, "dump"))
        rc = dump(fd, out, &cfg);
    else {
        rc = ctl(fd, FIKIT_TRACE_START);
        if (!rc) {
            signal(SIGINT, on_int);
            fprintf(stderr, "fikit trace: recording for %.0f s (Ctrl-C to stop early)\n", seconds);
            struct timespec ts = {.tv_sec = 0, .tv_nsec = 100000000};
            for (double t = 0; t < seconds && !interrupted; t += 0.1)
                nanosleep(&ts, NULL);
            rc = dump(fd, out, &cfg);
            rc |= ctl(fd, FIKIT_TRACE_STOP);
        }
    }
    close(fd);
    return rc;
}
