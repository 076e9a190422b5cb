#include "core/policy.h"

#include <errno.h>
#include <string.h>

static const char *const policy_names[] = {"fill", "strict", "passthrough"};

const char *fikit_policy_name(enum fikit_policy p)
{
    return (unsigned)p < 3 ? policy_names[p] : "?";
}

int fikit_policy_parse(const char *name, enum fikit_policy *out)
{
    for (int i = 0; i < 3; i++) {
        if (strcmp(name, policy_names[i]) == 0) {
            *out = (enum fikit_policy)i;
            return 0;
        }
    }
    return -EINVAL;
}

uint64_t fikit_idle_threshold(bool learned, uint64_t idle_after_ns, uint64_t learned_ns)
{
    if (!learned)
        return idle_after_ns;
    uint64_t twice = learned_ns > UINT64_MAX / 2 ? UINT64_MAX : 2 * learned_ns;
    return twice > idle_after_ns ? twice : idle_after_ns;
}

uint64_t fikit_pause_threshold(bool on, const struct fikit_gap_pred *gap)
{
    if (!on || !gap || !fikit_gap_pred_known(gap))
        return UINT64_MAX;
    uint64_t p99 = gap->q_ns[FIKIT_GAP_POINTS - 1];
    return p99 > FIKIT_PAUSE_FLOOR_NS ? p99 : FIKIT_PAUSE_FLOOR_NS;
}

bool fikit_task_is_active(uint64_t launches, uint64_t last_ns, uint64_t busy_until_ns,
                          uint64_t idle_after_ns, uint64_t now)
{
    uint64_t end = busy_until_ns > last_ns ? busy_until_ns : last_ns;
    return launches != 0 && now < end + idle_after_ns;
}

static uint64_t min64(uint64_t a, uint64_t b) { return a < b ? a : b; }

uint64_t fikit_task_room(const struct fikit_gap_pred *gap, uint64_t busy_until_ns, uint64_t now,
                         double confidence)
{
    if (now < busy_until_ns)
        return 0;
    return fikit_gap_remaining(gap, now - busy_until_ns, confidence);
}

void fikit_fill_rooms_init(struct fikit_fill_rooms *r, uint64_t max_queued_ns)
{
    *r = (struct fikit_fill_rooms){.room = UINT64_MAX, .sure = UINT64_MAX, .starving = UINT64_MAX,
                                   .max_queued_ns = max_queued_ns};
}

void fikit_fill_rooms_add(struct fikit_fill_rooms *r, const struct fikit_gap_pred *gap,
                          uint64_t busy_until_ns, uint64_t now, double confidence)
{
    r->room = min64(r->room, fikit_task_room(gap, busy_until_ns, now, confidence));
    r->sure = min64(r->sure, fikit_task_room(gap, busy_until_ns, now, FIKIT_SURE_CONFIDENCE));
    r->starving = min64(r->starving, fikit_task_room(gap, busy_until_ns, now,
                                                     FIKIT_SCHED_STARVING_CONFIDENCE));
}

void fikit_fill_rooms_done(struct fikit_fill_rooms *r)
{
    if (r->room == UINT64_MAX)
        r->room = r->sure = r->starving = 0;
}
