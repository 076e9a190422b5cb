/* Owns: profile files, one per task and device model, in the versioned text
 * format described in docs/profile-format.md. Loading rejects a corrupt,
 * truncated or other-version file with an error naming the file and line;
 * nothing of a rejected file reaches the caller's store. Saving is atomic:
 * a temporary file in the same directory, fsync, rename, fsync of the
 * directory, so a crash leaves either the old profile or the new one. */
#ifndef FIKIT_CORE_PROFILE_H
#define FIKIT_CORE_PROFILE_H

#include "core/error.h"
#include "core/kernel_id.h"
#include "core/measure.h"

#include <stddef.h>

/* 2: burst records (the task's bursts alone, by launch count); version 1
 * files still load.
 * 3: a burst counts from the start of its host work (interpose/burst.c);
 * version 2 files load without their burst records, which timed only the
 * device part and are learned again. */
#define FIKIT_PROFILE_VERSION 3

struct fikit_profile_meta {
    char task[128];
    char device_model[256];
    enum fikit_backend_kind backend;
};

/* Builds DIR/TASK/MODEL.profile with MODEL reduced to [A-Za-z0-9._-].
 * Returns 0 or -ENAMETOOLONG. */
int fikit_profile_path(char *buf, size_t len, const char *dir, const char *task,
                       const char *device_model);

/* Loads path and merges its records into out (an initialised store).
 * On any error out is left untouched, err says "PATH:LINE: what". */
int fikit_profile_load(const char *path, struct fikit_profile_meta *meta,
                       struct fikit_measure_store *out, struct fikit_err *err);

/* Writes st atomically to path, creating missing parent directories.
 * On error the file at path is unchanged and err says why. What is written
 * always loads: kernels without a name and gaps that name a kernel without
 * a record are left out (the loader's rules), and the text is loaded with
 * fikit_profile_check_text before it is written. */
int fikit_profile_save(const char *path, const struct fikit_profile_meta *meta,
                       const struct fikit_measure_store *st, struct fikit_err *err);

/* Whether text (a whole profile) loads: 0, or the loader's error. */
int fikit_profile_check_text(const char *path, const char *text, size_t len, struct fikit_err *err);

#endif
