/* A unit test's scratch directory: a fresh one under /tmp for each test
 * that names make_dir as its .init, removed with everything in it (files
 * made read-only included) by remove_dir as its .fini. */
#ifndef FIKIT_TESTS_UNIT_SCRATCH_DIR_H
#define FIKIT_TESTS_UNIT_SCRATCH_DIR_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>

static char dir[64];

static void make_dir(void)
{
    snprintf(dir, sizeof dir, "/tmp/fikit-test-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

static void remove_dir(void)
{
    char cmd[200];
    snprintf(cmd, sizeof cmd, "chmod -R u+w %s; rm -rf %s", dir, dir);
    cr_assert_eq(system(cmd), 0);
}

#endif
