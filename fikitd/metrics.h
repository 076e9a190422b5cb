/* Owns: fikitd's Prometheus metrics as a textfile for node-exporter's
 * textfile collector ([daemon] metrics_file, metrics_interval_ms): what
 * `fikit status` shows, in the text exposition format. The control plane
 * formats a snapshot on a timer (the same copy under each device's lock as
 * a status request takes); a writer thread of its own writes it beside the
 * target and renames it over, so a scrape never reads half a file and a
 * slow disk never delays the control plane or a decision. */
#ifndef FIKITD_METRICS_H
#define FIKITD_METRICS_H

struct fikit_config;
struct fikitd_device;

/* Starts the writer thread and a timer for cfg's metrics_file and writes the
 * first snapshot of the devices. Returns the timer's descriptor (for
 * epoll), -1 when metrics are off, or -errno. */
int fikitd_metrics_start(const struct fikit_config *cfg, struct fikitd_device *const *devs, int ndevs);
/* The timer fired: a new snapshot of the devices for the writer. */
void fikitd_metrics_tick(struct fikitd_device *const *devs, int ndevs);
/* Stops the writer and removes the file (a fikitd that is gone has no
 * metrics; a stale file would say otherwise). */
void fikitd_metrics_stop(void);

#endif
