#include "interpose/fault.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

__attribute__((constructor)) static void fault_init(void)
{
    const char *f = getenv("FIKIT_FAULT");
    if (!f || strncmp(f, "die:", 4) != 0)
        return;
    static const char *const names[] = {"", "register", "hold", "granted", "launch"};
    for (int i = 1; i < 5; i++)
        if (strcmp(f + 4, names[i]) == 0)
            fikit_client.fault_at = (uint8_t)i;
}

void fikit_fault_die(void)
{
    kill(getpid(), SIGKILL);
    pause();
}
