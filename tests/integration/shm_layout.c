/* Prints where fikit's shared memory keeps the fields that
 * integration.hostile_segment tries to write as another program would
 * (core/shm.h), as JSON, so the test follows the layout instead of copying
 * it. */
#include "core/proto.h"
#include "core/shm.h"

#include <stddef.h>
#include <stdio.h>

#define HDR(f) printf("\"hdr.%s\": %zu, ", #f, offsetof(struct fikit_shm_header, f))
#define OWNER(f) printf("\"owner.%s\": %zu, ", #f, offsetof(struct fikit_shm_owner, f))
#define SLOT(f) printf("\"slot.%s\": %zu, ", #f, offsetof(struct fikit_shm_slot, f))

int main(void)
{
    printf("{");
    HDR(magic);
    HDR(daemon_state);
    HDR(level_mask);
    HDR(slot_mask);
    HDR(trace_on);
    HDR(params.policy);
    HDR(owner);
    OWNER(state);
    OWNER(level);
    OWNER(pid);
    OWNER(gen);
    SLOT(pub_lock);
    SLOT(pub.busy_until_ns);
    SLOT(waiters);
    printf("\"waiter.state\": %zu, \"waiter.size\": %zu, \"waiters\": %d, ",
           offsetof(struct fikit_shm_waiter, state), sizeof(struct fikit_shm_waiter), FIKIT_SHM_WAITERS);
    printf("\"owner.size\": %zu, \"hdr.size\": %zu, \"slot.size\": %zu, \"commons.size\": %lu, "
           "\"magic\": %llu, \"running\": %d, \"stopped\": %d, \"passthrough\": %d, \"claimed\": %d, "
           "\"msg.slot\": %d, \"msg.slot_fd\": %d, \"part.commons\": %d, \"part.own\": %d, \"part.peer\": %d}\n",
           sizeof(struct fikit_shm_owner), (size_t)FIKIT_SHM_SIZE, (size_t)FIKIT_SHM_SLOT_SIZE,
           FIKIT_SHM_COMMONS_SIZE, (unsigned long long)FIKIT_SHM_MAGIC, FIKIT_DAEMON_RUNNING,
           FIKIT_DAEMON_STOPPED, FIKIT_POLICY_PASSTHROUGH, FIKIT_WAITER_CLAIMED, FIKIT_MSG_SLOT,
           FIKIT_MSG_SLOT_FD, FIKIT_PART_COMMONS, FIKIT_PART_OWN, FIKIT_PART_PEER);
    return 0;
}
