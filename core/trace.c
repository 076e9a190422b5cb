#include "core/trace.h"

#include "core/sched.h"

#include <inttypes.h>

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20 || *p >= 0x7f)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

static void sep(FILE *f, int *first)
{
    if (!*first)
        fputs(",\n", f);
    *first = 0;
}

static double us(uint64_t ns) { return (double)ns / 1000.0; }

static void kernel_label(FILE *f, fikit_trace_namer namer, void *ctx, int slot, uint64_t key)
{
    const char *name = namer ? namer(ctx, slot, key) : NULL;
    char buf[32];
    if (!name) {
        snprintf(buf, sizeof buf, "kernel %016" PRIx64, key);
        name = buf;
    }
    json_string(f, name);
}

/* The events drawn as an instant on their task's track: name, category,
 * and the args after the key, in microseconds from e->a, e->b, e->c. */
static const struct instant {
    uint16_t type;
    const char *name, *cat, *args[3];
} instants[] = {
    {FIKIT_TRACE_HOLD, "hold", "hold", {"predicted_us"}},
    {FIKIT_TRACE_GAP, "gap seen", "measure", {"seen_us", "predicted_us", "predicted_p50_us"}},
    {FIKIT_TRACE_KERNEL, "kernel measured", "measure", {"duration_us"}},
    {FIKIT_TRACE_FILL, "filled a gap", "fill", {"room_us", "predicted_us"}},
};

/* Writes e if it is an instant event; false if it is not one. */
static bool write_instant(FILE *f, int *first, int dev, const struct fikit_trace_event *e)
{
    for (size_t i = 0; i < sizeof instants / sizeof instants[0]; i++) {
        const struct instant *in = &instants[i];
        if (in->type != e->type)
            continue;
        sep(f, first);
        fprintf(f, "{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"i\",\"s\":\"t\",\"pid\":%d,\"tid\":%d,"
                   "\"ts\":%.3f,\"args\":{\"key\":\"%016" PRIx64 "\"",
                in->name, in->cat, dev, e->slot, us(e->t_ns), e->key);
        const uint64_t v[3] = {e->a, e->b, e->c};
        for (int j = 0; j < 3 && in->args[j]; j++)
            fprintf(f, ",\"%s\":%.3f", in->args[j], us(v[j]));
        fputs("}}", f);
        return true;
    }
    return false;
}

size_t fikit_trace_write_json(FILE *f, int dev, const char *device_name,
                              const struct fikit_trace_event *ev, size_t n,
                              const struct fikit_trace_task *tasks, size_t ntasks,
                              fikit_trace_namer namer, void *ctx, int *first)
{
    size_t written = 0;
    char label[160];
    sep(f, first);
    snprintf(label, sizeof label, "device %d: %s", dev, device_name);
    fprintf(f, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"args\":{\"name\":", dev);
    json_string(f, label);
    fputs("}}", f);
    written++;
    for (size_t i = 0; i < ntasks; i++) {
        sep(f, first);
        snprintf(label, sizeof label, "%s (priority %d, pid %d)", tasks[i].name, tasks[i].level,
                 tasks[i].pid);
        fprintf(f, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":",
                dev, tasks[i].slot);
        json_string(f, label);
        fputs("}}", f);
        fprintf(f, ",\n{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,"
                   "\"args\":{\"sort_index\":%d}}",
                dev, tasks[i].slot, tasks[i].level * 100 + tasks[i].slot);
        written += 2;
    }
    for (size_t i = 0; i < n; i++) {
        const struct fikit_trace_event *e = &ev[i];
        switch (e->type) {
        case FIKIT_TRACE_LAUNCH:
            /* The kernel as the client predicted it, then the gap after it. */
            sep(f, first);
            fprintf(f, "{\"name\":");
            kernel_label(f, namer, ctx, e->slot, e->key);
            fprintf(f, ",\"cat\":\"launch\",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,"
                       "\"dur\":%.3f,\"args\":{\"key\":\"%016" PRIx64 "\",\"level\":%u,"
                       "\"predicted_gap_us\":%.3f}}",
                    dev, e->slot, us(e->t_ns), e->a > e->t_ns ? us(e->a - e->t_ns) : 0.0, e->key,
                    e->level, us(e->b));
            if (e->b) {
                sep(f, first);
                fprintf(f, "{\"name\":\"predicted gap\",\"cat\":\"gap\",\"ph\":\"X\",\"pid\":%d,"
                           "\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f}",
                        dev, e->slot, us(e->a > e->t_ns ? e->a : e->t_ns), us(e->b));
                written++;
            }
            break;
        case FIKIT_TRACE_GRANT:
            sep(f, first);
            fprintf(f, "{\"name\":\"held (%s)\",\"cat\":\"grant\",\"ph\":\"X\",\"pid\":%d,"
                       "\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"key\":\"%016" PRIx64 "\","
                       "\"reason\":\"%s\",\"room_us\":%.3f,\"predicted_us\":%.3f,"
                       "\"woken\":%s}}",
                    fikit_grant_reason_name(e->reason & ~FIKIT_TRACE_GRANT_WOKEN), dev, e->slot,
                    us(e->c), e->t_ns > e->c ? us(e->t_ns - e->c) : 0.0, e->key,
                    fikit_grant_reason_name(e->reason & ~FIKIT_TRACE_GRANT_WOKEN), us(e->a), us(e->b),
                    e->reason & FIKIT_TRACE_GRANT_WOKEN ? "true" : "false");
            break;
        case FIKIT_TRACE_PACE:
            sep(f, first);
            /* queued 0: a beside task's wait while the level above ran too
             * slow (beside_max_slowdown), not a drain of its own queue. */
            fprintf(f, "{\"name\":\"%s\",\"cat\":\"pace\",\"ph\":\"X\",\"pid\":%d,"
                       "\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"queued_us\":%.3f,"
                       "\"guard\":%s}}",
                    e->a ? "paced" : "beside guard", dev, e->slot,
                    us(e->t_ns > e->b ? e->t_ns - e->b : 0), us(e->b), us(e->a), e->a ? "false" : "true");
            break;
        default:
            if (!write_instant(f, first, dev, e))
                continue; /* a type this fikit does not know: nothing written */
        }
        written++;
    }
    return written;
}
