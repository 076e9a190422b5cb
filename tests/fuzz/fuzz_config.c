/* fikit.ini: the parser (inih with fikit's line-counting reader) and every
 * validation. Any input must give 0 or an error that names the file. */
#include "conf/config.h"
#include "tests/fuzz/fuzz_util.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int load(const char *path, void *arg, struct fikit_err *err)
{
    struct fikit_config *c = arg;
    fikit_config_defaults(c);
    return fikit_config_load_file(path, c, err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fikit_config c;
    if (fuzz_load(data, size, load, &c) == 0) {
        for (int i = 0; i < c.ntasks; i++)
            if (c.tasks[i].priority < 0 || c.tasks[i].priority > 9 || !fikit_task_name_valid(c.tasks[i].name))
                abort();
        (void)fikit_config_max_priority(&c, 0, 0);
    }
    return 0;
}
