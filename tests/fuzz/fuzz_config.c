/* fikit.ini: the parser (inih with fikit's line-counting reader) and every
 * validation. Any input must give 0 or an error that names the file. */
#include "conf/config.h"
#include "tests/fuzz/fuzz_util.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    int fd = fuzz_as_file(data, size, path, sizeof path);
    if (fd < 0)
        return 0;
    struct fikit_config c;
    struct fikit_err err;
    fikit_config_defaults(&c);
    int rc = fikit_config_load_file(path, &c, &err);
    fuzz_error_names_file(rc, &err, path);
    if (rc == 0) {
        for (int i = 0; i < c.ntasks; i++)
            if (c.tasks[i].priority < 0 || c.tasks[i].priority > 9 || !fikit_task_name_valid(c.tasks[i].name))
                abort();
        (void)fikit_config_max_priority(&c, 0, 0);
    }
    close(fd);
    return 0;
}
