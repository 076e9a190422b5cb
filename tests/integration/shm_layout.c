/* Prints where fikit's shared segment keeps the fields that
 * integration.hostile_segment writes as another program would (core/shm.h),
 * as JSON, so the test follows the layout instead of copying it. */
#include "core/shm.h"

#include <stddef.h>
#include <stdio.h>

#define HDR(f) printf("\"hdr.%s\": %zu, ", #f, offsetof(struct fikit_shm_header, f))
#define SLOT(f) printf("\"slot.%s\": %zu, ", #f, offsetof(struct fikit_shm_slot, f))

int main(void)
{
    printf("{");
    HDR(magic);
    HDR(daemon_state);
    HDR(level_mask);
    HDR(trace_on);
    HDR(policy);
    HDR(spin_ns);
    HDR(max_queued_ns);
    SLOT(state);
    SLOT(level);
    SLOT(pid);
    SLOT(pub_lock);
    SLOT(pub_seq);
    SLOT(pub.launches);
    SLOT(pub.busy_until_ns);
    SLOT(waiters);
    printf("\"waiter.state\": %zu, \"waiter.size\": %zu, \"waiters\": %d, ",
           offsetof(struct fikit_shm_waiter, state), sizeof(struct fikit_shm_waiter), FIKIT_SHM_WAITERS);
    printf("\"slots\": %zu, \"slot.size\": %zu, \"magic\": %llu, \"running\": %d, \"stopped\": %d, "
           "\"passthrough\": %d, \"claimed\": %d, \"spin_always\": %llu}\n",
           offsetof(struct fikit_shm, slots), sizeof(struct fikit_shm_slot),
           (unsigned long long)FIKIT_SHM_MAGIC, FIKIT_DAEMON_RUNNING, FIKIT_DAEMON_STOPPED,
           FIKIT_POLICY_PASSTHROUGH, FIKIT_WAITER_CLAIMED, (unsigned long long)FIKIT_SPIN_ALWAYS);
    return 0;
}
