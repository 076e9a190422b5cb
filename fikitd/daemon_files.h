/* Owns: fikitd's files in its state directory, named in one place for
 * fikitd, which writes them, and the fikit commands, which find the daemon
 * by them: a detached daemon's log, and its pid file while it runs. */
#ifndef FIKITD_DAEMON_FILES_H
#define FIKITD_DAEMON_FILES_H

#include <stddef.h>

struct fikit_config;

#define FIKITD_LOG_FILE "fikitd.log"
#define FIKITD_PID_FILE "fikitd.pid"

/* STATE_DIR/NAME for cfg's state directory. */
void fikitd_state_file(const struct fikit_config *cfg, const char *name, char *buf, size_t len);

/* The pid in cfg's fikitd.pid if that process runs and is a fikitd (its
 * command name), so that a stale file whose pid was reused names nobody;
 * 0 otherwise. */
int fikitd_running_pid(const struct fikit_config *cfg);

#endif
