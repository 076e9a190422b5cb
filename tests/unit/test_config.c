/* fikit.ini: defaults, every key, the search order, and every kind of error
 * with its exact one-line message. */
#include "conf/config.h"
#include "core/shm.h"

#include <criterion/criterion.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char path[256];

static const char *write_ini(const char *text)
{
    snprintf(path, sizeof path, "/tmp/fikit-test-ini-XXXXXX");
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return path;
}

static void cleanup(void) { unlink(path); }

/* Loads text and expects an error equal to "PATH:" + rest. */
static void expect_error(const char *text, const char *rest)
{
    struct fikit_config c;
    struct fikit_err err;
    fikit_config_defaults(&c);
    const char *p = write_ini(text);
    cr_assert_eq(fikit_config_load_file(p, &c, &err), -EINVAL, "accepted:\n%s", text);
    char want[1024];
    snprintf(want, sizeof want, "%s:%s", p, rest);
    cr_assert_str_eq(err.msg, want);
}

TestSuite(config, .fini = cleanup);

Test(config, defaults)
{
    struct fikit_config c;
    fikit_config_defaults(&c);
    cr_assert_eq(c.backend, FIKIT_BACKEND_CHOICE_AUTO);
    cr_assert_eq(c.sched.policy, FIKIT_POLICY_FILL);
    cr_assert_eq(c.substrate, FIKIT_SUBSTRATE_TIMESLICE);
    cr_assert_eq(c.substrate_cost_ns, -1);
    cr_assert_eq(c.on_daemon_missing, FIKIT_ON_MISSING_PASSTHROUGH);
    cr_assert_eq(c.ntasks, 0);
    struct fikit_sched_params p;
    fikit_config_sched_params(&c, -1, &p);
    cr_assert_eq(p.substrate_cost_ns, 250000, "the H200 time-slice switch");
    fikit_config_sched_params(&c, 42000, &p);
    cr_assert_eq(p.substrate_cost_ns, 42000, "a calibrated cost wins over the default");
    cr_assert(p.switches_contexts, "time-slicing switches contexts");
    c.substrate = FIKIT_SUBSTRATE_MPS;
    fikit_config_sched_params(&c, -1, &p);
    cr_assert_not(p.switches_contexts, "MPS does not");
    c.substrate = FIKIT_SUBSTRATE_TIMESLICE;
    fikit_config_sched_params(&c, -1, &p);
    cr_assert_eq(p.starve_after_ns, 2000000);
    cr_assert_float_eq(p.gap_confidence, 0.3, 1e-12);
    cr_assert_eq(p.max_queued_ns, 100000);
    cr_assert_eq(c.warn_held_ns, 10000000000ull, "a launch held 10 s is logged");
}

Test(config, every_key_is_read)
{
    const char *p = write_ini("; comment\n"
                              "[fikit]\nbackend = opencl\nlog_level = debug\n"
                              "[scheduler]\npolicy = strict\nsubstrate = mps\nsubstrate_cost_us = 12\n"
                              "safety_margin_us = 7\ngap_confidence = 0.25\nidle_after_us = 5000\n"
                              "recheck_us = 300\npoll_us = 0\nspin_us = 70\nstarve_after_us = 0\n"
                              "max_queued_us = 150\nbeside_max_slowdown = 1.2\n"
                              "[daemon]\nsocket = /tmp/x.sock\nsocket_group = video\nstate_dir = /tmp/state\n"
                              "trace_events = 2048\nwarn_held_after_ms = 500\n"
                              "[client]\non_daemon_missing = fail\nsample_rate = 0.5\n"
                              "profile_dir = /tmp/prof\ndefault_priority = 7\n"
                              "[task.serve]\npriority = 0 ; inline comment\n"
                              "[task.train]\npriority = 9\nmps_thread_percentage = 40\nshare = beside\n"
                              "latency_budget_of = bursts\n"
                              "[limits]\ndefault = 4\nuser.root = 0\ngroup.video = 2\n");
    struct fikit_config c;
    struct fikit_err err;
    fikit_config_defaults(&c);
    cr_assert_eq(fikit_config_load_file(p, &c, &err), 0, "%s", err.msg);
    cr_assert_eq(c.backend, FIKIT_BACKEND_CHOICE_OPENCL);
    cr_assert_eq(c.log_level, FIKIT_LOG_DEBUG);
    cr_assert_eq(c.sched.policy, FIKIT_POLICY_STRICT);
    cr_assert_eq(c.substrate, FIKIT_SUBSTRATE_MPS);
    cr_assert_eq(c.substrate_cost_ns, 12000);
    cr_assert_eq(c.sched.safety_margin_ns, 7000);
    cr_assert_float_eq(c.sched.gap_confidence, 0.25, 1e-12);
    cr_assert_eq(c.sched.idle_after_ns, 5000000);
    cr_assert_eq(c.sched.recheck_ns, 300000);
    cr_assert_eq(c.poll_ns, 0);
    cr_assert_eq(c.spin_ns, 70000);
    cr_assert_eq(c.sched.starve_after_ns, 0, "0 turns the starving rule off");
    cr_assert_eq(c.sched.max_queued_ns, 150000);
    cr_assert_float_eq(c.sched.beside_max_slowdown, 1.2, 1e-12);
    struct fikit_sched_params sp;
    fikit_config_sched_params(&c, -1, &sp);
    cr_assert_eq(sp.starve_after_ns, 0);
    cr_assert_eq(sp.max_queued_ns, 150000);
    cr_assert_float_eq(sp.beside_max_slowdown, 1.2, 1e-12);
    cr_assert_str_eq(c.socket_group, "video");
    cr_assert_str_eq(c.socket_path, "/tmp/x.sock");
    cr_assert_str_eq(c.state_dir, "/tmp/state");
    cr_assert_eq(c.trace_events, 2048);
    cr_assert_eq(c.warn_held_ns, 500000000ull);
    cr_assert_eq(c.on_daemon_missing, FIKIT_ON_MISSING_FAIL);
    cr_assert_float_eq(c.sample_rate, 0.5, 1e-12);
    cr_assert_str_eq(c.profile_dir, "/tmp/prof");
    cr_assert_eq(c.default_priority, 7);
    cr_assert_eq(c.ntasks, 2);
    cr_assert_eq(fikit_config_task(&c, "serve")->priority, 0);
    cr_assert_eq(fikit_config_task(&c, "train")->mps_thread_percentage, 40);
    cr_assert_eq(fikit_config_task(&c, "train")->share, FIKIT_SHARE_BESIDE);
    cr_assert_eq(fikit_config_task(&c, "serve")->share, FIKIT_SHARE_GAPS, "gaps by default");
    cr_assert_null(fikit_config_task(&c, "other"));
    char list[128];
    fikit_config_task_list(&c, list, sizeof list);
    cr_assert_str_eq(list, "serve, train");
    cr_assert_eq(c.limit_default, 4);
    cr_assert_eq(c.nlimits, 2);
    cr_assert_eq(fikit_config_max_priority(&c, 0, 0), 0, "root is listed with 0");
    cr_assert_eq(fikit_config_max_priority(&c, 4242, 4242), 4, "an unlisted user gets the default");
    char buf[256];
    cr_assert_eq(fikit_config_socket_path(&c, buf, sizeof buf), 0);
    cr_assert_str_eq(buf, "/tmp/x.sock");
    cr_assert_eq(fikit_config_profile_dir(&c, buf, sizeof buf), 0);
    cr_assert_str_eq(buf, "/tmp/prof");
}

Test(config, unknown_section)
{
    expect_error("[fikit]\nbackend = cuda\n[schedular]\n",
                 "3: [schedular]: unknown section (accepted: [fikit], [scheduler], [daemon], "
                 "[client], [task.NAME], [limits])");
}

Test(config, unknown_key)
{
    expect_error("[scheduler]\npolicy = fill\npolcy = strict\n",
                 "3: [scheduler] polcy: unknown key (accepted: policy, substrate, "
                 "substrate_cost_us, safety_margin_us, gap_confidence, idle_after_us, idle_floor_us, pauses, recheck_us, "
                 "starve_after_us, max_queued_us, max_wait_ms, mps_lower_share, mps_lower_thread_percentage, mps_lower_cap, "
                 "beside_max_slowdown, latency_budget, latency_budget_of, poll_us, spin_us)");
}

Test(config, bad_number)
{
    expect_error("[scheduler]\nsafety_margin_us = 20us\n",
                 "2: [scheduler] safety_margin_us = 20us: not a whole number (accepted: an integer "
                 "from 0 to 1000000)");
    expect_error("[client]\nsample_rate = often\n",
                 "2: [client] sample_rate = often: not a number (accepted: a number from 0 to 1)");
    expect_error("[scheduler]\nmax_queued_us = 2000000\n",
                 "2: [scheduler] max_queued_us = 2000000: out of range (accepted: an integer "
                 "from 0 to 1000000)");
    expect_error("[daemon]\nwarn_held_after_ms = 4000000\n",
                 "2: [daemon] warn_held_after_ms = 4000000: out of range (accepted: an integer "
                 "from 0 to 3600000)");
    expect_error("[scheduler]\nsafety_margin_us = -5\n",
                 "2: [scheduler] safety_margin_us = -5: not a whole number (accepted: an integer "
                 "from 0 to 1000000)");
}

/* Every error of a file in one read: the first is the message's first line
 * (what callers print), each further one a line of its own, and past what
 * the message holds a count of the rest. A key's error does not come back
 * as what it left unset. */
Test(config, every_error_of_a_file_at_once)
{
    struct fikit_config c;
    struct fikit_err err;
    fikit_config_defaults(&c);
    const char *p = write_ini("[scheduler]\npolicy = fil\nmax_wait_ms = soon\n[task.serve]\npriority = 10\n"
                              "[task.train]\nshare = beside\n");
    cr_assert_eq(fikit_config_load_file(p, &c, &err), -EINVAL);
    char want[1024];
    snprintf(want, sizeof want,
             "%s:2: [scheduler] policy = fil: unknown value (accepted: fill, strict, passthrough)\n"
             "%s:3: [scheduler] max_wait_ms = soon: not a whole number (accepted: an integer from 0 to 3600000)\n"
             "%s:5: [task.serve] priority = 10: out of range (accepted: an integer from 0 to 9)\n"
             "%s:6: [task.train]: priority is not set (accepted: an integer from 0 to 9)",
             p, p, p, p);
    cr_assert_str_eq(err.msg, want);

    /* More than the message holds: it ends with how many more there were. */
    char text[4096] = "[scheduler]\n";
    for (int i = 0; i < 40; i++)
        strcat(text, "bogus_key_with_a_long_name = 1\n");
    fikit_config_defaults(&c);
    p = write_ini(text);
    cr_assert_eq(fikit_config_load_file(p, &c, &err), -EINVAL);
    cr_assert(strstr(err.msg, "more errors)") != NULL, "%s", err.msg);
    cr_assert_lt(strlen(err.msg), sizeof err.msg);
}

Test(config, priority_out_of_range)
{
    expect_error("[task.serve]\npriority = 10\n",
                 "2: [task.serve] priority = 10: out of range (accepted: an integer from 0 to 9)");
}

Test(config, unknown_backend_policy_substrate)
{
    expect_error("[fikit]\nbackend = vulkan\n",
                 "2: [fikit] backend = vulkan: unknown value (accepted: auto, cuda, hip, opencl)");
    expect_error("\n[scheduler]\npolicy = fifo\n",
                 "3: [scheduler] policy = fifo: unknown value (accepted: fill, strict, passthrough)");
    expect_error("[scheduler]\nsubstrate = mig\n",
                 "2: [scheduler] substrate = mig: unknown value (accepted: timeslice, mps)");
}

Test(config, task_without_priority)
{
    expect_error("[task.serve]\nmps_thread_percentage = 50\n",
                 "1: [task.serve]: priority is not set (accepted: an integer from 0 to 9)");
}

Test(config, share_beside_needs_a_thread_cap_under_mps)
{
    expect_error("[scheduler]\nsubstrate = mps\n[task.train]\npriority = 9\nshare = beside\n",
                 "5: [task.train] share = beside: needs [scheduler] substrate = mps and "
                 "mps_thread_percentage from 1 to 99 for the task (substrate is mps, "
                 "mps_thread_percentage 0)");
    expect_error("[task.train]\npriority = 9\nmps_thread_percentage = 50\nshare = beside\n",
                 "4: [task.train] share = beside: needs [scheduler] substrate = mps and "
                 "mps_thread_percentage from 1 to 99 for the task (substrate is timeslice, "
                 "mps_thread_percentage 50)");
    expect_error("[scheduler]\nsubstrate = mps\n[task.train]\npriority = 9\n"
                 "mps_thread_percentage = 100\nshare = beside\n",
                 "6: [task.train] share = beside: needs [scheduler] substrate = mps and "
                 "mps_thread_percentage from 1 to 99 for the task (substrate is mps, "
                 "mps_thread_percentage 100)");
    expect_error("[task.train]\npriority = 9\nshare = always\n",
                 "3: [task.train] share = always: unknown value (accepted: gaps, beside)");
}

/* What a budget holds: the requests' latency unless [scheduler] or the
 * task's own section says bursts; the task's section wins. */
Test(config, a_budget_is_on_the_requests_unless_a_section_says_bursts)
{
    struct fikit_config c;
    struct fikit_err err;
    fikit_config_defaults(&c);
    cr_assert(fikit_config_task_budget_of_requests(&c, NULL), "the default: requests");
    const char *p = write_ini("[scheduler]\nlatency_budget_of = bursts\n"
                              "[task.serve]\npriority = 0\n"
                              "[task.api]\npriority = 0\nlatency_budget = 1.2\nlatency_budget_of = requests\n");
    cr_assert_eq(fikit_config_load_file(p, &c, &err), 0, "%s", err.msg);
    cr_assert_not(fikit_config_task_budget_of_requests(&c, NULL));
    cr_assert_not(fikit_config_task_budget_of_requests(&c, fikit_config_task(&c, "serve")), "[scheduler]'s");
    cr_assert(fikit_config_task_budget_of_requests(&c, fikit_config_task(&c, "api")), "its own");
    cr_assert_float_eq(fikit_config_task_budget(&c, fikit_config_task(&c, "api"), 0), 1.2, 1e-9);
    expect_error("[task.api]\npriority = 0\nlatency_budget_of = latency\n",
                 "3: [task.api] latency_budget_of = latency: unknown value (accepted: requests, bursts)");
    expect_error("[scheduler]\nlatency_budget_of = 1\n",
                 "2: [scheduler] latency_budget_of = 1: unknown value (accepted: requests, bursts)");
}

/* One rule for fikit-launch, the client and fikitd: with mps_lower_cap =
 * launches a beside task gets no thread cap but the same share, kept by
 * confining its launches. */
Test(config, mps_lower_cap_launches_trades_the_thread_cap_for_confined_launches)
{
    struct fikit_config c;
    struct fikit_err err;
    struct fikit_task_sharing s;
    fikit_config_defaults(&c);
    cr_assert_eq(c.mps_lower_cap, FIKIT_CAP_THREADS);
    cr_assert_eq(fikit_config_load_file(write_ini("[scheduler]\nsubstrate = mps\nmps_lower_cap = launches\n"
                                                  "[task.train]\npriority = 9\nmps_thread_percentage = 40\n"
                                                  "share = beside\n"),
                                        &c, &err),
                 0, "%s", err.msg);
    fikit_config_task_sharing(&c, NULL, 5, &s);
    cr_assert_eq(s.share, FIKIT_SHARE_BESIDE);
    cr_assert_eq(s.thread_pct, 0, "no thread cap: green contexts cannot be made under one");
    cr_assert_eq(s.confine_pct, 70, "mps_lower_thread_percentage is the share");
    cr_assert_eq(fikit_task_sm_share(&s), 70);
    cr_assert(s.low_client_priority);
    fikit_config_task_sharing(&c, fikit_config_task(&c, "train"), 9, &s);
    cr_assert_eq(s.thread_pct, 0);
    cr_assert_eq(s.confine_pct, 40, "the task's own share");
    fikit_config_task_sharing(&c, NULL, 0, &s);
    cr_assert_eq(s.share, FIKIT_SHARE_GAPS);
    cr_assert_eq(s.confine_pct, 0, "priority 0 is never confined");
    c.mps_lower_cap = FIKIT_CAP_THREADS;
    fikit_config_task_sharing(&c, NULL, 5, &s);
    cr_assert_eq(s.thread_pct, 70);
    cr_assert_eq(s.confine_pct, 0);
    expect_error("[scheduler]\nmps_lower_cap = green\n",
                 "2: [scheduler] mps_lower_cap = green: unknown value (accepted: threads, launches)");
}

Test(config, beside_max_slowdown_is_off_or_a_slowdown)
{
    expect_error("[scheduler]\nbeside_max_slowdown = 0.5\n",
                 "2: [scheduler] beside_max_slowdown = 0.5: out of range (accepted: 0 (off) or a "
                 "number from 1 to 10)");
    expect_error("[scheduler]\nbeside_max_slowdown = 11\n",
                 "2: [scheduler] beside_max_slowdown = 11: out of range (accepted: 0 (off) or a "
                 "number from 1 to 10)");
    struct fikit_config c;
    struct fikit_err err;
    fikit_config_defaults(&c);
    cr_assert_eq(fikit_config_load_file(write_ini("[scheduler]\nbeside_max_slowdown = 0.0\n"), &c, &err), 0);
    cr_assert_eq(c.sched.beside_max_slowdown, 0);
    cr_assert_eq(fikit_config_load_file(write_ini("[scheduler]\nbeside_max_slowdown = 1.5\n"), &c, &err), 0);
    cr_assert_eq(c.sched.beside_max_slowdown, 1.5);
}

Test(config, spin_us_auto_spins_only_with_cores_to_spare)
{
    struct fikit_config c;
    fikit_config_defaults(&c);
    cr_assert_eq(c.spin_ns, FIKIT_SPIN_AUTO, "auto is the default");
    cr_assert_eq(fikit_config_spin_ns(&c, 2, false), 50000, "a 2-core machine spins 50 us around decisions");
    cr_assert_eq(fikit_config_spin_ns(&c, FIKIT_SPIN_AUTO_MIN_CPUS - 1, false), 50000);
    cr_assert_eq(fikit_config_spin_ns(&c, FIKIT_SPIN_AUTO_MIN_CPUS, false), FIKIT_SPIN_ALWAYS);
    cr_assert_eq(fikit_config_spin_ns(&c, 16, false), FIKIT_SPIN_ALWAYS, "the H200's host spins through holds");
    cr_assert_eq(fikit_config_spin_ns(&c, 64, true), 50000,
                 "a device computing on the host's CPUs keeps its cores: no spinning through holds");
    c.spin_ns = 70000;
    cr_assert_eq(fikit_config_spin_ns(&c, 16, false), 70000, "a number in fikit.ini is kept on any machine");
    c.spin_ns = FIKIT_SPIN_ALWAYS;
    cr_assert_eq(fikit_config_spin_ns(&c, 2, true), FIKIT_SPIN_ALWAYS, "so is always");
    expect_error("[scheduler]\nspin_us = sometimes\n",
                 "2: [scheduler] spin_us = sometimes: not auto, always or a whole number in range "
                 "(accepted: auto, always or an integer from 0 to 10000)");
}

Test(config, bad_task_name)
{
    expect_error("[task.my task]\npriority = 1\n",
                 "1: [task.my task]: bad task name 'my task' (accepted: 1 to 63 of A-Z a-z 0-9 _ . -)");
}

Test(config, duplicate_key)
{
    expect_error("[task.serve]\npriority = 1\npriority = 2\n",
                 "3: [task.serve] priority: set twice (a key may be set once per section)");
}

Test(config, key_outside_section)
{
    expect_error("policy = fill\n",
                 "1: policy = fill: key outside any section (sections: [fikit], [scheduler], "
                 "[daemon], [client], [task.NAME], [limits])");
}

Test(config, not_key_value)
{
    expect_error("[scheduler]\npolicy fill\n", "2: not a section header, key = value, or comment");
}

Test(config, relative_path)
{
    expect_error("[daemon]\nsocket = run/fikitd.sock\n",
                 "2: [daemon] socket = run/fikitd.sock: not an absolute path (accepted: auto or an "
                 "absolute path)");
}

Test(config, continuation_line)
{
    expect_error("[scheduler]\npolicy = fill\n  strict\n",
                 "3: indented line 'strict': continuation lines are not accepted");
}

Test(config, bad_limit)
{
    expect_error("[limits]\nuid.0 = 1\n",
                 "2: [limits] uid.0: unknown key (accepted: default, user.NAME, group.NAME)");
}

/* [limits]: a user's groups, for fikit_config_limit_for. */
struct groups_of {
    const char *const *names;
    int n;
    int err; /* < 0: every lookup fails with it */
};

static int in_groups(const char *group, void *arg)
{
    const struct groups_of *g = arg;
    if (g->err)
        return g->err;
    for (int i = 0; i < g->n; i++)
        if (strcmp(g->names[i], group) == 0)
            return 1;
    return 0;
}

static void load_limits(struct fikit_config *c, const char *text)
{
    struct fikit_err err;
    fikit_config_defaults(c);
    cr_assert_eq(fikit_config_load_file(write_ini(text), c, &err), 0, "%s", err.msg);
}

static int limit_of(const struct fikit_config *c, const char *user, const char *const *groups, int n)
{
    struct groups_of g = {.names = groups, .n = n};
    return fikit_config_limit_for(c, user, in_groups, &g);
}

#define GROUPS(...) (const char *const[]){__VA_ARGS__}, (int)(sizeof((const char *const[]){__VA_ARGS__}) / sizeof(char *))

Test(config, limits_user_rule_lowers_below_default)
{
    struct fikit_config c;
    load_limits(&c, "[limits]\ndefault = 0\nuser.probe = 5\n");
    cr_assert_eq(limit_of(&c, "probe", NULL, 0), 5, "user.probe = 5 caps probe under default = 0");
    cr_assert_eq(limit_of(&c, "alice", NULL, 0), 0, "others keep the default");
    cr_assert_eq(limit_of(&c, NULL, NULL, 0), 0, "a uid without a name: the default");
}

Test(config, limits_group_rule_lowers_below_default)
{
    /* The documented example: group.students = 5 beside default = 0. */
    struct fikit_config c;
    load_limits(&c, "[limits]\ndefault = 0\nuser.inference = 0\ngroup.students = 5\n");
    cr_assert_eq(limit_of(&c, "bob", GROUPS("users", "students")), 5, "a student is capped at 5");
    cr_assert_eq(limit_of(&c, "carol", GROUPS("users")), 0, "others keep the default 0");
    cr_assert_eq(limit_of(&c, "inference", GROUPS("users")), 0);
}

Test(config, limits_default_binds_users_no_rule_names)
{
    struct fikit_config c;
    load_limits(&c, "[limits]\ndefault = 5\nuser.inference = 0\n");
    cr_assert_eq(limit_of(&c, "inference", NULL, 0), 0, "a user rule sets its user's ceiling");
    cr_assert_eq(limit_of(&c, "probe", GROUPS("users")), 5, "default = 5 caps everyone else");
    load_limits(&c, "[limits]\ndefault = 9\n");
    cr_assert_eq(limit_of(&c, "root", NULL, 0), 9, "default alone binds everyone");
}

Test(config, limits_strictest_rule_binds)
{
    struct fikit_config c;
    load_limits(&c, "[limits]\ndefault = 0\nuser.ta = 1\ngroup.students = 5\ngroup.lab = 7\n");
    cr_assert_eq(limit_of(&c, "ta", GROUPS("students")), 5,
                 "a group's ceiling holds for a member a user rule names too");
    cr_assert_eq(limit_of(&c, "ta", NULL, 0), 1);
    cr_assert_eq(limit_of(&c, "dan", GROUPS("students", "lab")), 7, "the strictest group binds");
    cr_assert_eq(limit_of(&c, "dan", GROUPS("lab", "students")), 7, "whatever the order");
}

Test(config, limits_documented_example_file)
{
    /* conf/fikit.ini's [limits] with its examples switched on. */
    FILE *f = fopen(FIKIT_SOURCE_DIR "/conf/fikit.ini", "r");
    cr_assert_not_null(f);
    static char text[65536];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    char *u = strstr(text, "; user.inference = 0"), *g = strstr(text, "; group.students = 5");
    cr_assert(u && g, "the example names user.inference and group.students");
    memmove(u, u + 2, strlen(u + 2) + 1);
    g = strstr(text, "; group.students = 5");
    memmove(g, g + 2, strlen(g + 2) + 1);
    struct fikit_config c;
    load_limits(&c, text);
    cr_assert_eq(c.nlimits, 2);
    cr_assert_eq(limit_of(&c, "bob", GROUPS("students")), 5, "group.students = 5 caps a student");
    cr_assert_eq(limit_of(&c, "inference", NULL, 0), 0);
    cr_assert_eq(limit_of(&c, "carol", NULL, 0), 0);
}

Test(config, limits_failed_lookup_is_an_error)
{
    struct fikit_config c;
    load_limits(&c, "[limits]\ndefault = 0\ngroup.students = 5\n");
    struct groups_of g = {.err = -EMFILE};
    cr_assert_eq(fikit_config_limit_for(&c, "bob", in_groups, &g), -EMFILE,
                 "a group that cannot be looked up refuses, never guesses");
    load_limits(&c, "[limits]\ndefault = 2\n");
    cr_assert_eq(fikit_config_limit_for(&c, "bob", in_groups, &g), 2, "no group rule: nothing to look up");
}

Test(config, limits_of_real_credentials)
{
    /* The databases of this machine: root is uid 0 in group root (gid 0). */
    struct fikit_config c;
    load_limits(&c, "[limits]\ndefault = 0\ngroup.root = 3\n");
    cr_assert_eq(fikit_config_max_priority(&c, 0, 0), 3, "group.root = 3 caps root, primary group 0");
    cr_assert_eq(fikit_config_max_priority(&c, 4242, 4242), 0, "an unknown uid: the default");
    load_limits(&c, "[limits]\ndefault = 0\nuser.root = 4\n");
    cr_assert_eq(fikit_config_max_priority(&c, 0, 0), 4, "user.root = 4 caps root");
    /* Out of descriptors the user database cannot be read: an error, not the default. */
    struct rlimit rl = {.rlim_cur = 64, .rlim_max = 64};
    cr_assert_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
    int fds[64], nfd = 0;
    for (; nfd < 64; nfd++)
        if ((fds[nfd] = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0)
            break;
    cr_assert_eq(errno, EMFILE);
    int r = fikit_config_max_priority(&c, 0, 0);
    while (nfd > 0)
        close(fds[--nfd]);
    cr_assert_lt(r, 0, "a lookup with no descriptor left refuses (got %d)", r);
}

Test(config, search_order)
{
    char dir[] = "/tmp/fikit-test-xdg-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char sub[300], file[320];
    snprintf(sub, sizeof sub, "%s/fikit", dir);
    mkdir(sub, 0700);
    snprintf(file, sizeof file, "%s/fikit.ini", sub);
    FILE *f = fopen(file, "w");
    fputs("[scheduler]\npolicy = strict\n", f);
    fclose(f);
    const char *env = write_ini("[scheduler]\npolicy = passthrough\n");

    struct fikit_config c;
    struct fikit_err err;
    unsetenv("FIKIT_CONFIG");
    setenv("XDG_CONFIG_HOME", dir, 1);
    cr_assert_eq(fikit_config_load(NULL, &c, &err), 0, "%s", err.msg);
    cr_assert_eq(c.sched.policy, FIKIT_POLICY_STRICT, "from $XDG_CONFIG_HOME");
    cr_assert_str_eq(c.source, file);

    setenv("FIKIT_CONFIG", env, 1);
    cr_assert_eq(fikit_config_load(NULL, &c, &err), 0);
    cr_assert_eq(c.sched.policy, FIKIT_POLICY_PASSTHROUGH, "$FIKIT_CONFIG beats XDG");

    const char *explicit = "/tmp/fikit-test-explicit.ini";
    f = fopen(explicit, "w");
    fputs("[scheduler]\npolicy = fill\n", f);
    fclose(f);
    cr_assert_eq(fikit_config_load(explicit, &c, &err), 0);
    cr_assert_eq(c.sched.policy, FIKIT_POLICY_FILL, "--config beats everything");
    unlink(explicit);

    setenv("FIKIT_CONFIG", "/nonexistent/fikit.ini", 1);
    cr_assert_eq(fikit_config_load(NULL, &c, &err), -ENOENT, "a named file must exist");
    cr_assert_str_eq(err.msg,
                     "/nonexistent/fikit.ini: cannot read the configuration: No such file or directory");

    unsetenv("FIKIT_CONFIG");
    setenv("XDG_CONFIG_HOME", "/nonexistent", 1);
    if (access("/etc/fikit/fikit.ini", F_OK) != 0) {
        cr_assert_eq(fikit_config_load(NULL, &c, &err), 0);
        cr_assert_str_eq(c.source, "", "built-in defaults");
    }
    unlink(file);
    rmdir(sub);
    rmdir(dir);
}

Test(config, example_file_is_valid)
{
    struct fikit_config c;
    struct fikit_err err;
    fikit_config_defaults(&c);
    cr_assert_eq(fikit_config_load_file(FIKIT_SOURCE_DIR "/conf/fikit.ini", &c, &err), 0, "%s",
                 err.msg);
    cr_assert_geq(c.ntasks, 2);
}

Test(config, not_a_regular_file)
{
    /* A directory given as fikit.ini used to be "valid": the defaults,
     * [limits] default = 0 included. */
    char d[] = "/tmp/fikit-test-inidir-XXXXXX";
    cr_assert_not_null(mkdtemp(d));
    struct fikit_config c;
    struct fikit_err err;
    fikit_config_defaults(&c);
    cr_assert_eq(fikit_config_load_file(d, &c, &err), -EINVAL);
    char want[256];
    snprintf(want, sizeof want, "%s: not a regular file (a directory); the configuration is a text file", d);
    cr_assert_str_eq(err.msg, want);
    setenv("FIKIT_CONFIG", d, 1);
    cr_assert_eq(fikit_config_load(NULL, &c, &err), -EINVAL, "the search order refuses it too");
    unsetenv("FIKIT_CONFIG");
    rmdir(d);
    cr_assert_eq(fikit_config_load_file("/dev/null", &c, &err), -EINVAL);
    cr_assert_str_eq(err.msg, "/dev/null: not a regular file (a character device); the configuration is a "
                              "text file");
}

Test(config, nul_byte_is_named)
{
    struct fikit_config c;
    struct fikit_err err;
    fikit_config_defaults(&c);
    snprintf(path, sizeof path, "/tmp/fikit-test-ini-XXXXXX");
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    static const char text[] = "[scheduler]\npolicy = fi\0ll\n";
    cr_assert_eq(write(fd, text, sizeof text - 1), (ssize_t)sizeof text - 1);
    close(fd);
    cr_assert_eq(fikit_config_load_file(path, &c, &err), -EINVAL);
    char want[400];
    snprintf(want, sizeof want, "%s:2: NUL byte at column 12 (a configuration is text)", path);
    cr_assert_str_eq(err.msg, want, "not \"line too long\"");
}

Test(config, long_line_is_still_named)
{
    char text[1200];
    snprintf(text, sizeof text, "[scheduler]\n; %0*d\n", 1000, 0);
    struct fikit_config c;
    struct fikit_err err;
    fikit_config_defaults(&c);
    cr_assert_eq(fikit_config_load_file(write_ini(text), &c, &err), -EINVAL);
    cr_assert(strstr(err.msg, ":2: line longer than"), "%s", err.msg);
}

/* ------------------------------------------------- the table and fikit.ini */

/* Whether text holds needle as a whole: not followed by more of a word or a
 * number ("0..10" is not "0..100"). */
static bool has_phrase(const char *text, const char *needle)
{
    size_t n = strlen(needle);
    for (const char *p = text; (p = strstr(p, needle)); p++) {
        char next = p[n];
        if (!(isalnum((unsigned char)next) || next == '_' ||
              (next == '.' && isdigit((unsigned char)p[n + 1]))))
            return true;
    }
    return false;
}

static int row_of(const char *section, const char *key)
{
    for (size_t i = 0; i < fikit_conf_nkeys; i++)
        if (fikit_conf_name_matches(fikit_conf_keys[i].section, section) &&
            fikit_conf_name_matches(fikit_conf_keys[i].key, key))
            return (int)i;
    return -1;
}

/* Checks row i against the comment block that documents it: the accepted
 * list the table gives, and for a key set in the file, its default. */
static void check_doc(int i, const char *block, const char *value, bool assigned)
{
    const struct fikit_conf_key *k = &fikit_conf_keys[i];
    char want[256], acc[200];
    fikit_conf_accepted(k, true, acc, sizeof acc);
    snprintf(want, sizeof want, assigned ? "Accepted: %s" : "%s", acc);
    cr_expect(has_phrase(block, want), "conf/fikit.ini: [%s] %s is not documented with \"%s\" (from the "
              "table in conf/config.c); its comment: %s", k->section, k->key, want, block);
    if (!assigned || !k->def)
        return;
    snprintf(want, sizeof want, "Default: %s", k->def);
    cr_expect(has_phrase(block, want), "conf/fikit.ini: [%s] %s: no \"%s\" in its comment: %s", k->section,
              k->key, want, block);
    cr_expect_str_eq(value, k->def, "conf/fikit.ini: [%s] %s = %s, the table's default is %s", k->section,
                     k->key, value, k->def);
}

Test(config, ini_documents_every_key_of_the_table_and_no_other)
{
    FILE *f = fopen(FIKIT_SOURCE_DIR "/conf/fikit.ini", "r");
    cr_assert(f);
    bool documented[256] = {false};
    cr_assert_lt(fikit_conf_nkeys, 256);
    char line[512], section[128] = "", block[8192] = "";
    char listed[32][64];
    int nlisted = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (line[0] == ';' || line[0] == '#') {
            /* The comment of the next key or section, as one text; a line
             * "   name   ..." lists a name (a key, or an enum's value). */
            const char *t = line + 1;
            size_t indent = strspn(t, " ");
            char word[64] = "", eq[4] = "";
            if (indent == 3 && nlisted < 32 && sscanf(t, "%63[a-zA-Z_.]", word) == 0 &&
                sscanf(t + indent, "%63[a-zA-Z_.]", word) == 1)
                snprintf(listed[nlisted++], sizeof listed[0], "%s", word);
            /* A key set in an example, commented out: "; user.inference = 0". */
            if (sscanf(t + indent, "%63[a-z_.] %3s", word, eq) == 2 && strcmp(eq, "=") == 0 && indent == 1) {
                int i = row_of(section, word);
                cr_expect_geq(i, 0, "conf/fikit.ini: [%s] %s (an example) is not a key of the table", section,
                              word);
            }
            size_t used = strlen(block);
            snprintf(block + used, sizeof block - used, "%s%s", used ? " " : "", t + indent);
            continue;
        }
        char key[64], value[256];
        if (line[0] == '[') {
            cr_assert_eq(sscanf(line, "[%127[^]]]", section), 1, "%s", line);
            /* The comment before a section lists the section's keys. */
            for (int j = 0; j < nlisted; j++) {
                int i = row_of(section, listed[j]);
                cr_expect_geq(i, 0, "conf/fikit.ini: [%s] lists %s, not a key of the table", section, listed[j]);
                if (i >= 0) {
                    check_doc(i, block, NULL, false);
                    documented[i] = true;
                }
            }
        } else if (sscanf(line, "%63s = %255s", key, value) == 2) {
            int i = row_of(section, key);
            cr_expect_geq(i, 0, "conf/fikit.ini: [%s] %s is not a key of the table", section, key);
            /* A key without a default ([task.serve] priority = 0) is an
             * example; the section's comment documents it. */
            if (i >= 0 && fikit_conf_keys[i].def) {
                check_doc(i, block, value, true);
                documented[i] = true;
            }
            /* Keys listed in a key's comment (the [limits] rules). */
            for (int j = 0; j < nlisted; j++) {
                int l = row_of(section, listed[j]);
                if (l >= 0 && !documented[l]) {
                    check_doc(l, block, NULL, false);
                    documented[l] = true;
                }
            }
        } else {
            continue; /* a blank line */
        }
        block[0] = '\0';
        nlisted = 0;
    }
    fclose(f);
    for (size_t i = 0; i < fikit_conf_nkeys; i++)
        cr_expect(documented[i], "[%s] %s is in the table (conf/config.c) but not documented in conf/fikit.ini",
                  fikit_conf_keys[i].section, fikit_conf_keys[i].key);
}

/* The table's defaults are what fikit_config_defaults gives: each key's
 * one default, core has none of its own. */
Test(config, table_defaults)
{
    struct fikit_config c;
    fikit_config_defaults(&c);
    cr_expect_eq(c.sched.policy, FIKIT_POLICY_FILL);
    cr_expect_eq(c.sched.safety_margin_ns, 20000);
    cr_expect_eq(c.sched.gap_confidence, 0.3);
    cr_expect_eq(c.sched.idle_after_ns, 0, "auto: learned");
    cr_expect_eq(c.sched.idle_floor_ns, 20000000, "a learned idle threshold is at least 20 ms");
    cr_expect(c.sched.pauses);
    cr_expect_eq(c.sched.recheck_ns, 1000000);
    cr_expect_eq(c.sched.max_wait_ns, 1000000000ull);
    cr_expect_eq(c.sched.beside_max_slowdown, 0);
    cr_expect_eq(c.log_level, FIKIT_LOG_WARN);
    cr_expect_eq(c.spin_ns, FIKIT_SPIN_AUTO);
    cr_expect_eq(c.poll_ns, 50000);
    cr_expect_eq(c.trace_events, 65536);
    cr_expect_eq(c.warn_held_ns, 10000000000ull);
    cr_expect_eq(c.metrics_interval_ns, 5000000000ull);
    cr_expect_eq(c.sample_rate, 0.02);
    cr_expect_eq(c.default_priority, 5);
    cr_expect_eq(c.limit_default, 0);
    cr_expect_str_empty(c.socket_path);
    cr_expect_str_empty(c.metrics_file);
    struct fikit_sched_params p, d;
    fikit_config_sched_params(&c, -1, &p);
    fikit_sched_params_default(&d);
    cr_expect_eq(memcmp(&p, &d, sizeof p), 0, "the tests' defaults are the table's");
}

/* A value other than the row's default, as fikit.ini would write it. */
static void other_value(const struct fikit_conf_key *k, char *buf, size_t len)
{
    switch (k->type) {
    case FIKIT_CONF_ENUM:
        snprintf(buf, len, "%s", k->name(strcmp(k->def, k->name(0)) == 0 ? 1 : 0));
        return;
    case FIKIT_CONF_UINT:
        snprintf(buf, len, "%llu", (unsigned long long)(strcmp(k->def, "1") == 0 ? 2 : k->max == 1 ? 0 : 1));
        if (strcmp(buf, k->def) == 0 || (k->min > 1 && strcmp(buf, "1") == 0))
            snprintf(buf, len, "%llu", (unsigned long long)k->max);
        return;
    case FIKIT_CONF_DOUBLE:
        snprintf(buf, len, "%g", k->dmax);
        return;
    default:
        buf[0] = '\0';
    }
}

/* The one parameter record: every [scheduler] key whose field is in
 * c->sched reaches what fikitd's scheduler is given, through no copy by
 * hand (a new key is its row, its use, fikit.ini's text and a test). */
Test(config, policy_keys_reach_the_scheduler)
{
    size_t lo = offsetof(struct fikit_config, sched), hi = lo + sizeof(struct fikit_sched_params);
    int bound = 0;
    for (size_t i = 0; i < fikit_conf_nkeys; i++) {
        const struct fikit_conf_key *k = &fikit_conf_keys[i];
        if (strcmp(k->section, "scheduler") != 0 || k->off < lo || k->off >= hi)
            continue;
        char val[64], text[160];
        other_value(k, val, sizeof val);
        snprintf(text, sizeof text, "[scheduler]\n%s = %s\n", k->key, val);
        struct fikit_config c;
        struct fikit_err err;
        fikit_config_defaults(&c);
        struct fikit_sched_params before, after;
        fikit_config_sched_params(&c, -1, &before);
        cr_assert_eq(fikit_config_load_file(write_ini(text), &c, &err), 0, "%s: %s", text, err.msg);
        fikit_config_sched_params(&c, -1, &after);
        cr_expect_neq(memcmp(&before, &after, sizeof before), 0, "[scheduler] %s = %s (default %s) changed nothing",
                      k->key, val, k->def);
        bound++;
    }
    cr_expect_geq(bound, 11, "the policy's keys are bound to c->sched (%d are)", bound);
}

/* Every row is well formed: a default the row itself accepts, bounds in
 * order, a field inside its struct. */
Test(config, table_rows_are_well_formed)
{
    for (size_t i = 0; i < fikit_conf_nkeys; i++) {
        const struct fikit_conf_key *k = &fikit_conf_keys[i];
        cr_expect(k->min <= k->max && k->dmin <= k->dmax, "[%s] %s: bounds", k->section, k->key);
        cr_expect(k->type != FIKIT_CONF_UINT || k->scale >= 1, "[%s] %s: no scale", k->section, k->key);
        cr_expect(k->type != FIKIT_CONF_ENUM || (k->nnames > 0 && k->name), "[%s] %s: no names", k->section,
                  k->key);
        size_t limit = strncmp(k->section, "task.", 5) == 0 ? sizeof(struct fikit_task_conf)
                       : strchr(k->key, '.')               ? sizeof(struct fikit_limit)
                                                           : sizeof(struct fikit_config);
        cr_expect(k->off + k->size <= limit, "[%s] %s: field outside its struct", k->section, k->key);
        if (k->def) {
            char text[256];
            snprintf(text, sizeof text, "[%s]\n%s = %s\n", k->section, k->key, k->def);
            struct fikit_config c;
            struct fikit_err err;
            fikit_config_defaults(&c);
            cr_expect_eq(fikit_config_load_file(write_ini(text), &c, &err), 0, "[%s] %s: default %s: %s",
                         k->section, k->key, k->def, err.msg);
        }
    }
}

/* What the table's rows keep besides bounds: another spelling of an enum
 * value, words for special values, and the "accepted" of a path key. */
Test(config, table_words_and_spellings)
{
    struct fikit_config c;
    struct fikit_err err;
    fikit_config_defaults(&c);
    cr_assert_eq(fikit_config_load_file(write_ini("[fikit]\nlog_level = warning\n[scheduler]\n"
                                                  "spin_us = always\nsubstrate_cost_us = auto\n"
                                                  "idle_after_us = 7\n[daemon]\nmetrics_file = /tmp/m.prom\n"),
                                        &c, &err),
                 0, "%s", err.msg);
    cr_assert_eq(c.log_level, FIKIT_LOG_WARN, "warning is warn");
    cr_assert_eq(c.spin_ns, FIKIT_SPIN_ALWAYS);
    cr_assert_eq(c.substrate_cost_ns, -1);
    cr_assert_eq(c.sched.idle_after_ns, 7000);
    cr_assert_str_eq(c.metrics_file, "/tmp/m.prom");
    cr_assert_eq(fikit_config_load_file(write_ini("[daemon]\nmetrics_file = off\n"), &c, &err), 0);
    cr_assert_str_empty(c.metrics_file);
    expect_error("[daemon]\nmetrics_file = m.prom\n",
                 "2: [daemon] metrics_file = m.prom: not an absolute path (accepted: off or an absolute path)");
    expect_error("[daemon]\nsocket_group = \n",
                 "2: [daemon] socket_group = : not a group name (accepted: auto or a group name)");
    expect_error("[scheduler]\nidle_after_us = 0\n",
                 "2: [scheduler] idle_after_us = 0: not auto or a whole number in range (accepted: auto or an "
                 "integer from 1 to 60000000)");
}

/* What fikit_conf_value writes is what fikit.ini would: every default reads
 * back as the row's own default text. */
Test(config, values_print_as_the_ini_writes_them)
{
    struct fikit_config c;
    fikit_config_defaults(&c);
    for (size_t i = 0; i < fikit_conf_nkeys; i++) {
        const struct fikit_conf_key *k = &fikit_conf_keys[i];
        if (!k->def)
            continue;
        char v[256];
        fikit_conf_value(k, &c, v, sizeof v);
        cr_expect_str_eq(v, k->def, "[%s] %s: the default prints as %s", k->section, k->key, v);
    }
}

/* What `fikit config -c ini` prints, into out; it must succeed. */
static void config_output(const char *ini, char *out, size_t len)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s config -c %s", FIKIT_TOOL, ini);
    FILE *f = popen(cmd, "r");
    cr_assert_not_null(f);
    size_t n = fread(out, 1, len - 1, f);
    out[n] = '\0';
    cr_assert_eq(pclose(f), 0, "%s:\n%s", cmd, out);
}

/* `fikit config` prints every key of the table: each key of [fikit],
 * [scheduler], [daemon] and [client] on a line of its own, the keys of a
 * [task.NAME] that sets them all, and [limits] default and a rule of each
 * kind. */
Test(config, fikit_config_prints_every_key_of_the_table, .fini = cleanup)
{
    const char *p = write_ini("[scheduler]\nsubstrate = mps\n"
                              "[task.train]\npriority = 9\nmps_thread_percentage = 40\nshare = beside\n"
                              "latency_budget_of = bursts\n"
                              "[limits]\ndefault = 3\nuser.root = 0\ngroup.students = 5\n");
    static char out[16384];
    config_output(p, out, sizeof out);
    /* The task's section, on its own. */
    char task[1024] = "";
    const char *t = strstr(out, "\n[task.train]\n");
    cr_assert_not_null(t, "no [task.train]:\n%s", out);
    const char *end = strstr(t + 1, "\n\n");
    snprintf(task, sizeof task, "%.*s", (int)(end ? end - t : (ptrdiff_t)strlen(t)), t);
    for (size_t i = 0; i < fikit_conf_nkeys; i++) {
        const struct fikit_conf_key *k = &fikit_conf_keys[i];
        char want[128];
        size_t kl = strlen(k->key);
        if (kl > 5 && strcmp(k->key + kl - 5, ".NAME") == 0)
            kl -= 4; /* a [limits] rule: "user." */
        if (!strcmp(k->section, "limits"))
            snprintf(want, sizeof want, "\n%.*s", (int)kl, k->key);
        else
            snprintf(want, sizeof want, "\n%s = ", k->key);
        cr_expect_not_null(strstr(!strcmp(k->section, "task.NAME") ? task : out, want),
                           "[%s] %s is not in `fikit config`'s output:\n%s", k->section, k->key, out);
        char header[64];
        snprintf(header, sizeof header, "\n[%s]\n", k->section);
        cr_expect(!strcmp(k->section, "task.NAME") || strstr(out, header), "no %s in:\n%s", header, out);
    }
}

/* What `fikit config` prints is a fikit.ini of the same configuration: read
 * back, it prints the same (but for the first line, which names the file). */
Test(config, fikit_config_output_reads_back_as_the_same_configuration, .fini = cleanup)
{
    const char *p = write_ini("[scheduler]\nsubstrate = mps\nspin_us = 20\nmax_wait_ms = 0\n"
                              "[daemon]\nsocket = /tmp/x.sock\nsocket_group = nogroup\n"
                              "[task.train]\npriority = 9\nmps_thread_percentage = 40\nshare = beside\n"
                              "[task.serve]\npriority = 0\n"
                              "[limits]\ndefault = 3\nuser.root = 0\ngroup.students = 5\n");
    static char first[16384], second[16384];
    config_output(p, first, sizeof first);
    char again[4096];
    snprintf(again, sizeof again, "%s.again", p);
    FILE *f = fopen(again, "w");
    cr_assert_not_null(f);
    fputs(first, f);
    fclose(f);
    config_output(again, second, sizeof second);
    unlink(again);
    cr_expect_str_eq(strchr(second, '\n'), strchr(first, '\n'), "read back:\n%s\nfirst:\n%s", second, first);
    cr_expect_not_null(strstr(first, "\nsocket_group = nogroup\n"));
    cr_expect_not_null(strstr(first, "\n[task.train]\npriority = 9\nmps_thread_percentage = 40\nshare = beside\n"));
    cr_expect_not_null(strstr(first, "\n[limits]\ndefault = 3\nuser.root = 0\ngroup.students = 5\n"));
}
