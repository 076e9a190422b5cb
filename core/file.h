/* Owns: replacing a file whole, so that a reader sees the old text or the
 * new one and never a part (profiles, sim workloads, the calibration file).
 * The text goes to a temporary file beside path, which is synced, renamed
 * over path, and the rename synced through the directory. */
#ifndef FIKIT_CORE_FILE_H
#define FIKIT_CORE_FILE_H

#include <stddef.h>

/* 0, or -errno; on failure whatever was at path is left as it was. The new
 * file is mode 0644. The directory of path must exist. */
int fikit_file_replace(const char *path, const char *text, size_t len);

#endif
