#include "fikitd/daemon_files.h"

#include "conf/config.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

void fikitd_state_file(const struct fikit_config *cfg, const char *name, char *buf, size_t len)
{
    char state[PATH_MAX];
    fikit_config_state_dir(cfg, state, sizeof state);
    snprintf(buf, len, "%s/%s", state, name);
}

int fikitd_running_pid(const struct fikit_config *cfg)
{
    char path[PATH_MAX + 16];
    fikitd_state_file(cfg, FIKITD_PID_FILE, path, sizeof path);
    FILE *f = fopen(path, "re");
    int pid = 0;
    if (!f)
        return 0;
    if (fscanf(f, "%d", &pid) != 1 || pid <= 0)
        pid = 0;
    fclose(f);
    if (!pid)
        return 0;
    char comm[64] = "";
    snprintf(path, sizeof path, "/proc/%d/comm", pid);
    f = fopen(path, "re");
    if (!f)
        return 0;
    if (!fgets(comm, sizeof comm, f))
        comm[0] = '\0';
    fclose(f);
    comm[strcspn(comm, "\n")] = '\0';
    return strcmp(comm, "fikitd") == 0 ? pid : 0;
}
