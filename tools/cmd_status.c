/* fikit status: what fikitd is doing now. */
#include "conf/config.h"
#include "core/budget.h"
#include "core/proto.h"
#include "core/sched.h"
#include "tools/commands.h"
#include "tools/options.h"


#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fprintf(f, "Usage: fikit status [-c FILE] [-s SOCKET] [--json] [--watch SECONDS [--count N]]\n"
               "\n"
               "Shows fikitd's devices and, per device, the policy, substrate cost, the active\n"
               "priority level, the launches held now and the grants so far, and the arbiter's\n"
               "own latency since fikitd started (pickup: from a launch being held to the\n"
               "arbiter queueing it; pass: one look at every slot and the scheduler); then\n"
               "one row per task:\n"
               "\n"
               "  slot, pid, task   where and who it is\n"
               "  priority          its level, and what it asked for if [limits] lowered it\n"
               "                    (e.g. 3(<-0))\n"
               "  share             gaps: it runs only in the gaps of higher levels; beside:\n"
               "                    share = beside with its MPS thread cap in force, so it\n"
               "                    runs while they are active\n"
               "  state             active, or idle (it launched nothing for idle_ms)\n"
               "  launches, holds, grants\n"
               "                    its launches so far, those held, those granted\n"
               "  fills             launches that filled a gap by themselves\n"
               "  paces             waits for the lower work in flight to drain below\n"
               "                    max_queued_us, or for a level above to speed up\n"
               "                    (beside_max_slowdown)\n"
               "  held              its launches held now\n"
               "  wait_ms           how long the longest-held of them has waited\n"
               "  kern_ms           that kernel's predicted duration (? = never measured). A\n"
               "                    kernel longer than every gap above waits until those\n"
               "                    levels go idle; fikitd logs a wait past [daemon]\n"
               "                    warn_held_after_ms\n"
               "  idle_ms           how long it may launch nothing before it counts as idle\n"
               "  slowdown          its sampled kernels in the last second against its\n"
               "                    profile (- when unknown); share = beside tasks below it\n"
               "                    watch this\n"
               "\n"
               "Under a task with a latency_budget, a line says how fikitd holds it: what it\n"
               "holds (latency_budget_of: its requests or its bursts), the controller's step\n"
               "(0 = the tasks below wait while it is active, up to 13 = beside with 8 ms\n"
               "queued and, for a task whose launches fikit confines, the whole device while\n"
               "it rests), its pace, what each queued burst (its request waited for the one\n"
               "before) may take now at the task's load (its busy fraction; a burst from rest\n"
               "may take 1 + (budget - 1) / (1 - load); at the tail either's excess counts\n"
               "against the p99 of all its sizes), the body (its judged bursts' mean against\n"
               "alone's, held to what a queued burst may take), its last burst against what\n"
               "bursts of that size took alone, bursts read, cuts and climbs.\n"
               "Under a task below one, a line says what the budget lets it do now.\n"
               "\n"
               "Options:\n"
               "  -c, --config FILE   read the socket path from this fikit.ini\n"
               "  -s, --socket PATH   talk to the fikitd listening on PATH\n"
               "  -j, --json          print one JSON document: \"fikitd\" (version, pid,\n"
               "                      configuration) and \"devices\", each with its fields above\n"
               "                      and its \"tasks\" (times in ns, ratios as numbers, absent\n"
               "                      ones null)\n"
               "  -w, --watch SECONDS show it again every SECONDS until interrupted: on a\n"
               "                      terminal the screen is redrawn, else each is a block of\n"
               "                      its own (with --json, a line each)\n"
               "  -n, --count N       with --watch, stop after N\n"
               "  -h, --help          show this help\n"
               "\n"
               "Exit status: 0, or 1 if fikitd cannot be reached (with --watch: at the first\n"
               "look; later it says so and looks again), 2 on a usage error.\n");
}

/* Shared by the tool's commands. */
int fikit_tool_config(const char *cmd, const char *config, struct fikit_config *cfg)
{
    struct fikit_err err;
    if (fikit_config_load(config, cfg, &err) == 0)
        return 0;
    fprintf(stderr, "fikit %s: %s\n", cmd, err.msg);
    return -1;
}

int fikit_tool_connect(const char *cmd, const char *config, const char *socket_path)
{
    struct fikit_config cfg;
    char sock[4096];
    if (socket_path) {
        snprintf(sock, sizeof sock, "%s", socket_path);
    } else {
        if (fikit_tool_config(cmd, config, &cfg))
            return -1;
        fikit_config_socket_path(&cfg, sock, sizeof sock);
    }
    int fd = fikit_proto_connect(sock);
    if (fd < 0) {
        fprintf(stderr, "fikit %s: cannot reach fikitd at %s: %s\n", cmd, sock, strerror(-fd));
        return -1;
    }
    return fd;
}

/* Under a task's row: its latency budget as fikitd holds it, and what the
 * budgets above let it do (docs/DESIGN.md "The budget"). */
static void budget_lines(const struct fikit_msg_status_task *t)
{
    if (t->budget_ppm) {
        printf("       budget %.2fx alone (of %s): ", t->budget_ppm / 1e6, t->budget_of_requests ? "requests" : "bursts");
        if (t->budget_step < 0)
            printf("not held yet: no burst size was measured alone 10 times; run the task alone under "
                   "fikit first (%llu bursts read)\n", (unsigned long long)t->bursts);
        else
            printf("step %d%s, pace %.2fx, bursts %.3fx at most at load %.2f, body %.3fx, last burst %.2fx "
                   "alone, %llu bursts (%llu lost), %u cuts, %u climbs, %u sizes measured alone\n", t->budget_step,
                   t->budget_unmeetable ? " (unmeetable)" : "", t->budget_pace_ppm / 1e6,
                   t->budget_bursts_ppm / 1e6, t->budget_load_ppm / 1e6, t->budget_body_ppm / 1e6,
                   t->burst_slowdown_ppm / 1e6,
                   (unsigned long long)t->bursts,
                   (unsigned long long)t->bursts_lost, t->budget_cuts, t->budget_climbs, t->budget_sizes);
    }
    char share[48] = "";
    if (t->knob_sm_pct)
        snprintf(share, sizeof share, ", %u%% of the SMs", t->knob_sm_pct);
    switch (t->knob_mode) {
    case FIKIT_LOWER_WAIT:
        printf("       a budget above holds it: it waits while that level is active\n");
        break;
    case FIKIT_LOWER_GAPS:
        if (t->knob_inflight_ns)
            printf("       a budget above holds it: gaps only, %.0f us queued ahead at most\n",
                   t->knob_inflight_ns / 1e3);
        else
            printf("       a budget above holds it: gaps only, where a gap is near certain to last\n");
        break;
    case FIKIT_LOWER_BESIDE:
        printf("       a budget above holds it: beside, %.0f us queued ahead at most%s\n",
               t->knob_inflight_ns / 1e3, share);
        break;
    default:
        break;
    }
}

/* A string as JSON writes it. */
static void json_str(const char *v)
{
    putchar('"');
    for (const unsigned char *p = (const unsigned char *)v; *p; p++) {
        if (*p == '"' || *p == '\\')
            printf("\\%c", *p);
        else if (*p < 0x20)
            printf("\\u%04x", *p);
        else
            putchar(*p);
    }
    putchar('"');
}

static void json_device(const struct fikit_msg_status_device *d)
{
    printf("{\"index\":%u,\"key\":", d->index);
    json_str(d->key);
    printf(",\"model\":");
    json_str(d->model);
    printf(",\"policy\":\"%s\",\"substrate_cost_ns\":%llu,\"safety_margin_ns\":%llu,\"active_level\":",
           fikit_policy_name(d->policy), (unsigned long long)d->substrate_cost_ns,
           (unsigned long long)d->safety_margin_ns);
    if (d->top_level >= FIKIT_LEVELS)
        printf("null");
    else
        printf("%d", d->top_level);
    printf(",\"held_now\":%llu,\"grants\":{", (unsigned long long)d->held_now);
    for (int k = 0; k < FIKIT_GRANT_COUNTS; k++)
        printf("%s\"%s\":%llu", k ? "," : "", fikit_grant_count_name((enum fikit_grant_count)k),
               (unsigned long long)d->grants[k]);
    printf("},\"woken_ahead\":%llu,\"tracing\":%s,\"trace_lost\":%llu,"
           "\"pickup_ns\":{\"p50\":%llu,\"p99\":%llu,\"max\":%llu,\"count\":%llu},"
           "\"pass_ns\":{\"p50\":%llu,\"p99\":%llu,\"max\":%llu,\"count\":%llu},\"tasks\":[",
           (unsigned long long)d->nudges, d->trace_on ? "true" : "false", (unsigned long long)d->trace_lost,
           (unsigned long long)d->pickup_p50_ns, (unsigned long long)d->pickup_p99_ns,
           (unsigned long long)d->pickup_max_ns, (unsigned long long)d->pickups,
           (unsigned long long)d->pass_p50_ns, (unsigned long long)d->pass_p99_ns,
           (unsigned long long)d->pass_max_ns, (unsigned long long)d->passes);
}

static void json_ratio(const char *name, uint32_t ppm)
{
    if (ppm)
        printf(",\"%s\":%.6f", name, ppm / 1e6);
    else
        printf(",\"%s\":null", name);
}

static void json_task(const struct fikit_msg_status_task *t)
{
    printf("{\"slot\":%u,\"pid\":%d,\"task\":", t->slot, t->pid);
    json_str(t->name);
    printf(",\"priority\":%d,\"requested_priority\":%d,\"share\":\"%s\",\"state\":\"%s\",\"launches\":%llu,"
           "\"holds\":%llu,\"grants\":%llu,\"fills\":%llu,\"paces\":%llu,\"held_now\":%llu,\"held_longest_ns\":%llu,"
           "\"held_kernel_ns\":",
           t->level, t->requested_level, t->beside ? "beside" : "gaps", t->active ? "active" : "idle",
           (unsigned long long)t->launches, (unsigned long long)t->holds, (unsigned long long)t->grants,
           (unsigned long long)t->fills, (unsigned long long)t->paces, (unsigned long long)t->held_now,
           (unsigned long long)t->held_longest_ns);
    if (t->held_now && t->held_longest_dur_ns)
        printf("%llu", (unsigned long long)t->held_longest_dur_ns);
    else
        printf("null");
    printf(",\"idle_after_ns\":%llu", (unsigned long long)t->idle_after_ns);
    json_ratio("slowdown", t->slowdown_ppm);
    printf(",\"budget\":");
    if (!t->budget_ppm) {
        printf("null");
    } else {
        printf("{\"latency_budget\":%.6f,\"step\":", t->budget_ppm / 1e6);
        if (t->budget_step < 0)
            printf("null");
        else
            printf("%d", t->budget_step);
        printf(",\"unmeetable\":%s,\"of\":\"%s\"", t->budget_unmeetable ? "true" : "false",
               t->budget_of_requests ? "requests" : "bursts");
        json_ratio("load", t->budget_load_ppm);
        json_ratio("bursts_at_most", t->budget_bursts_ppm);
        json_ratio("body", t->budget_body_ppm);
        json_ratio("last_burst", t->burst_slowdown_ppm);
        json_ratio("pace", t->budget_pace_ppm);
        printf(",\"bursts\":%llu,\"bursts_lost\":%llu,\"cuts\":%u,\"climbs\":%u,\"sizes\":%u}",
               (unsigned long long)t->bursts, (unsigned long long)t->bursts_lost, t->budget_cuts,
               t->budget_climbs, t->budget_sizes);
    }
    static const char *const modes[] = {"as configured", "wait", "gaps", "beside"};
    printf(",\"steered\":{\"mode\":\"%s\",\"inflight_ns\":%llu,\"sm_pct\":%u}}",
           t->knob_mode < 4 ? modes[t->knob_mode] : "?", (unsigned long long)t->knob_inflight_ns, t->knob_sm_pct);
}

/* One look at fikitd: its devices and tasks, as text or JSON. 0, or 1 if it
 * could not be reached or answered with an error. */
static int look(const char *config, const char *sock, bool json)
{
    int fd = fikit_tool_connect("status", config, sock);
    if (fd < 0)
        return 1;
    char buf[FIKIT_MSG_MAX];
    uint16_t type;
    int rc = fikit_proto_send(fd, FIKIT_MSG_HELLO, NULL, 0, -1);
    if (!rc && fikit_proto_recv(fd, buf, &type, NULL, 5000) >= 0 && type == FIKIT_MSG_HELLO_OK) {
        const struct fikit_msg_hello_ok *h = fikit_proto_payload(buf);
        if (json) {
            printf("{\"fikitd\":{\"version\":");
            json_str(h->version);
            printf(",\"pid\":%d,\"configuration\":", h->pid);
            json_str(h->config);
            printf("},\"devices\":[");
        } else {
            printf("fikitd %s, pid %d, configuration %s, %u device%s\n", h->version, h->pid, h->config,
                   h->ndevices, h->ndevices == 1 ? "" : "s");
        }
    } else if (json) {
        printf("{\"fikitd\":null,\"devices\":[");
    }
    if (rc || fikit_proto_send(fd, FIKIT_MSG_STATUS, NULL, 0, -1)) {
        fprintf(stderr, "fikit status: fikitd closed the connection\n");
        close(fd);
        return 1;
    }
    int devices = 0, tasks = 0;
    for (;;) {
        int n = fikit_proto_recv(fd, buf, &type, NULL, 5000);
        if (n < 0) {
            fprintf(stderr, "fikit status: no answer from fikitd: %s\n", strerror(-n));
            close(fd);
            return 1;
        }
        if (type == FIKIT_MSG_END)
            break;
        if (type == FIKIT_MSG_STATUS_DEVICE && json) {
            printf("%s", devices++ ? "]}," : "");
            json_device(fikit_proto_payload(buf));
            tasks = 0;
        } else if (type == FIKIT_MSG_STATUS_TASK && json) {
            printf("%s", tasks++ ? "," : "");
            json_task(fikit_proto_payload(buf));
        } else if (type == FIKIT_MSG_STATUS_DEVICE) {
            const struct fikit_msg_status_device *d = fikit_proto_payload(buf);
            char top[16];
            if (d->top_level >= FIKIT_LEVELS)
                snprintf(top, sizeof top, "none");
            else
                snprintf(top, sizeof top, "%d", d->top_level);
            printf("\ndevice %u: %s\n", d->index, d->key);
            char tracing[64] = "";
            if (d->trace_on || d->trace_lost)
                snprintf(tracing, sizeof tracing, "; %s (%llu events lost)",
                         d->trace_on ? "tracing" : "traced", (unsigned long long)d->trace_lost);
            printf("  model %s; policy %s; substrate cost %.0f us; safety margin %.0f us%s\n",
                   d->model, fikit_policy_name(d->policy), d->substrate_cost_ns / 1000.0,
                   d->safety_margin_ns / 1000.0, tracing);
            printf("  active level %s; held now %llu; granted:", top, (unsigned long long)d->held_now);
            for (int k = 0; k < FIKIT_GRANT_COUNTS; k++)
                printf("%s %llu %s", k ? "," : "", (unsigned long long)d->grants[k],
                       fikit_grant_count_name((enum fikit_grant_count)k));
            printf("; %llu held threads woken ahead of a decision\n", (unsigned long long)d->nudges);
            printf("  arbiter: pickup p50 %.1f us, p99 %.1f us, max %.1f us (%llu launches); "
                   "pass p50 %.1f us, p99 %.1f us, max %.1f us (%llu passes)\n",
                   d->pickup_p50_ns / 1000.0, d->pickup_p99_ns / 1000.0, d->pickup_max_ns / 1000.0,
                   (unsigned long long)d->pickups, d->pass_p50_ns / 1000.0, d->pass_p99_ns / 1000.0,
                   d->pass_max_ns / 1000.0, (unsigned long long)d->passes);
            printf("  %4s %8s %-20s %8s %-6s %-6s %10s %8s %8s %8s %8s %5s %9s %8s %9s %8s\n", "slot",
                   "pid", "task", "priority", "share", "state", "launches", "holds", "grants", "fills",
                   "paces", "held", "wait_ms", "kern_ms", "idle_ms", "slowdown");
        } else if (type == FIKIT_MSG_STATUS_TASK) {
            const struct fikit_msg_status_task *t = fikit_proto_payload(buf);
            char prio[16];
            if (t->level != t->requested_level)
                snprintf(prio, sizeof prio, "%d(<-%d)", t->level, t->requested_level);
            else
                snprintf(prio, sizeof prio, "%d", t->level);
            char wait[24] = "-", kern[24] = "-";
            if (t->held_now) {
                snprintf(wait, sizeof wait, "%.1f", t->held_longest_ns / 1e6);
                if (t->held_longest_dur_ns)
                    snprintf(kern, sizeof kern, "%.3f", t->held_longest_dur_ns / 1e6);
                else
                    snprintf(kern, sizeof kern, "?");
            }
            char slow[16] = "-";
            if (t->slowdown_ppm)
                snprintf(slow, sizeof slow, "%.2fx", t->slowdown_ppm / 1e6);
            printf("  %4u %8d %-20s %8s %-6s %-6s %10llu %8llu %8llu %8llu %8llu %5llu %9s %8s %9.1f %8s\n",
                   t->slot, t->pid, t->name, prio, t->beside ? "beside" : "gaps", t->active ? "active" : "idle",
                   (unsigned long long)t->launches,
                   (unsigned long long)t->holds, (unsigned long long)t->grants,
                   (unsigned long long)t->fills, (unsigned long long)t->paces,
                   (unsigned long long)t->held_now, wait, kern, t->idle_after_ns / 1e6, slow);
            budget_lines(t);
        } else if (type == FIKIT_MSG_ERROR) {
            const struct fikit_msg_error *e = fikit_proto_payload(buf);
            fprintf(stderr, "fikit status: %s\n", e->text);
            close(fd);
            return 1;
        }
    }
    if (json)
        printf("%s]}\n", devices ? "]}" : "");
    close(fd);
    return 0;
}

int fikit_cmd_status(int argc, char **argv)
{
    const char *config = NULL, *sock = NULL, *watch = NULL, *count_arg = NULL;
    bool json = false;
    const struct fikit_tool_opt opts[] = {FIKIT_OPT("config", 'c', &config), FIKIT_OPT("socket", 's', &sock),
                                          FIKIT_FLAG("json", 'j', &json), FIKIT_OPT("watch", 'w', &watch),
                                          FIKIT_OPT("count", 'n', &count_arg), {0}};
    fikit_tool_options(argc, argv, opts, usage); /* status takes no operands; extra ones are ignored */
    double every = 0;
    long count = 0;
    if (watch) {
        char *end;
        every = strtod(watch, &end);
        if (*end || !(every >= 0.05 && every <= 86400)) {
            fprintf(stderr, "fikit status: --watch %s: accepted: seconds from 0.05 to 86400\n", watch);
            return 2;
        }
    }
    if (count_arg) {
        char *end;
        count = strtol(count_arg, &end, 10);
        if (*end || count < 1 || !watch) {
            fprintf(stderr, "fikit status: --count %s: accepted: a number of looks from 1, with --watch\n",
                    count_arg);
            return 2;
        }
    }
    if (!watch)
        return look(config, sock, json);
    bool tty = isatty(STDOUT_FILENO);
    for (long i = 0; !count || i < count; i++) {
        if (i) {
            struct timespec ts = {(time_t)every, (long)((every - (double)(time_t)every) * 1e9)};
            nanosleep(&ts, NULL);
        }
        if (tty && !json)
            printf("\033[H\033[2J");
        else if (i && !json)
            printf("\n");
        if (!json) {
            time_t now = time(NULL);
            char when[64];
            strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", localtime(&now));
            printf("%s, every %g s\n", when, every);
        }
        int rc = look(config, sock, json);
        if (rc && i == 0)
            return rc;
        fflush(stdout);
    }
    return 0;
}
