/* The daemon's message decoder: fikit_proto_check() sees every packet a
 * client sends before anyone reads it. Whatever it accepts must be safe to
 * read as its type: strings terminated, counts in range. */
#include "core/proto.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint16_t type;
    if (size > FIKIT_MSG_MAX)
        return 0; /* recvmsg never hands over more */
    char *buf = malloc(size ? size : 1);
    memcpy(buf, data, size);
    if (fikit_proto_check(buf, size, &type, NULL) == 0) {
        const char *p = buf + sizeof(struct fikit_msg_hdr);
        if (type == FIKIT_MSG_REGISTER) {
            const struct fikit_msg_register *m = (const void *)p;
            if (strlen(m->task) >= sizeof m->task || strlen(m->device_key) >= sizeof m->device_key ||
                m->level < 0 || m->level > 9)
                abort();
        } else if (type == FIKIT_MSG_TRACE_EVENTS) {
            const struct fikit_msg_trace_events *m = (const void *)p;
            if (m->n > FIKIT_TRACE_CHUNK)
                abort();
        } else if (type == FIKIT_MSG_ERROR) {
            const struct fikit_msg_error *m = (const void *)p;
            if (strlen(m->text) >= sizeof m->text)
                abort();
        }
    }
    free(buf);
    return 0;
}
