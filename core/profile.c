#include "core/profile.h"

#include "core/file.h"
#include "core/sketch.h"

#include <ctype.h>
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAGIC "fikit-profile"

/* ------------------------------------------------------------------ paths */

int fikit_profile_path(char *buf, size_t len, const char *dir, const char *task,
                       const char *device_model)
{
    char model[256];
    size_t i = 0;
    for (const char *p = device_model; *p && i < sizeof model - 1; p++)
        model[i++] = (isalnum((unsigned char)*p) || *p == '.' || *p == '-') ? *p : '_';
    model[i] = '\0';
    if (i == 0)
        strcpy(model, "unknown");
    int n = snprintf(buf, len, "%s/%s/%s.profile", dir, task, model);
    return (n < 0 || (size_t)n >= len) ? -ENAMETOOLONG : 0;
}

/* -------------------------------------------------------------- encoding */

/* Names and models are written with every byte outside '!'..'~' and '%'
 * itself as %XX, so a record is always whitespace-separated fields. */
static void put_escaped(FILE *f, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p <= ' ' || *p >= 0x7f || *p == '%')
            fprintf(f, "%%%02X", *p);
        else
            fputc(*p, f);
    }
}

static int unescape(char *s)
{
    char *w = s;
    for (char *r = s; *r; r++) {
        if (*r == '%') {
            if (!isxdigit((unsigned char)r[1]) || !isxdigit((unsigned char)r[2]))
                return -EINVAL;
            char hex[3] = {r[1], r[2], 0};
            *w++ = (char)strtol(hex, NULL, 16);
            r += 2;
        } else {
            *w++ = *r;
        }
    }
    *w = '\0';
    return 0;
}

static uint64_t fnv1a(const char *data, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)data[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

static void put_stat(FILE *f, const struct fikit_stat *s)
{
    fprintf(f, " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %u", s->count, s->sum,
            s->count ? s->min : 0, s->max, s->sketch.zero_count, (unsigned)s->sketch.nbins);
    for (int i = 0; i < s->sketch.nbins; i++)
        fprintf(f, " %d:%u", s->sketch.index[i], s->sketch.count[i]);
}

/* ------------------------------------------------------ what a file holds */

/* What the loader accepts of a store, and so all the writer writes: a
 * kernel with a description and a name (an empty name would leave its
 * record a field short), and a gap whose kernels both have such a record.
 * The learner records a gap whose previous kernel was never measured (a
 * program of many kernels samples pairs whose first was not timed); the
 * writer used to write it and the loader rejected the whole profile
 * (":50: gap record names a kernel with no kernel record"). */
static bool kernel_kept(const struct fikit_measure_store *st, uint64_t key)
{
    if (key == FIKIT_KEY_NONE || !fikit_measure_kernel(st, key))
        return false;
    const struct fikit_kernel_desc *d = fikit_measure_desc(st, key);
    return d && d->name && d->name[0];
}

static bool gap_kept(const struct fikit_measure_store *st, uint64_t prev, uint64_t key)
{
    return kernel_kept(st, key) && (prev == FIKIT_KEY_NONE || kernel_kept(st, prev));
}

struct loader;
static int load_into(struct loader *L, FILE *fp, struct fikit_profile_meta *meta,
                     struct fikit_measure_store *st);

/* ---------------------------------------------------------------- saving */

static int mkdir_parents(char *path)
{
    /* path is a file path; create every directory above it. */
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        int rc = mkdir(path, 0755);
        int e = errno;
        *p = '/';
        if (rc && e != EEXIST)
            return -e;
    }
    return 0;
}

int fikit_profile_save(const char *path, const struct fikit_profile_meta *meta,
                       const struct fikit_measure_store *st, struct fikit_err *err)
{
    char *text = NULL;
    size_t text_len = 0;
    FILE *mem = open_memstream(&text, &text_len);
    if (!mem)
        return fikit_err_set(err, -ENOMEM, "%s: out of memory", path);

    size_t nk = 0, ng = 0;
    const struct fikit_kernel_stats **ks = fikit_measure_sorted_kernels(st, &nk);
    const struct fikit_gap_stats **gs = fikit_measure_sorted_gaps(st, &ng);
    size_t nb = 0;
    const struct fikit_burst_stats **bs = fikit_measure_sorted_bursts(st, &nb);
    fprintf(mem, MAGIC " %d\n", FIKIT_PROFILE_VERSION);
    fprintf(mem, "# fikit profile: kernel durations and inter-kernel gaps of one task on "
                 "one device model.\n# Format: docs/profile-format.md. Written atomically; "
                 "edit with care (the end line holds a checksum).\n");
    fputs("task ", mem);
    put_escaped(mem, meta->task);
    fputs("\ndevice-model ", mem);
    put_escaped(mem, meta->device_model);
    fprintf(mem, "\nbackend %s\nsketch-accuracy %g\n", fikit_backend_kind_name(meta->backend),
            FIKIT_SKETCH_ACCURACY);
    size_t wk = 0, wg = 0; /* what is written */
    for (size_t i = 0; ks && i < nk; i++) {
        if (!kernel_kept(st, ks[i]->key))
            continue;
        wk++;
        const struct fikit_kernel_desc *d = fikit_measure_desc(st, ks[i]->key);
        fprintf(mem, "kernel %016" PRIx64 " ", ks[i]->key);
        put_escaped(mem, d->name);
        fprintf(mem, " %u,%u,%u %u,%u,%u %u", d->grid[0], d->grid[1], d->grid[2], d->block[0],
                d->block[1], d->block[2], d->shmem);
        put_stat(mem, &ks[i]->duration);
        fputc('\n', mem);
    }
    for (size_t i = 0; gs && i < ng; i++) {
        if (!gap_kept(st, gs[i]->prev, gs[i]->key))
            continue;
        wg++;
        fprintf(mem, "gap %016" PRIx64 " %016" PRIx64, gs[i]->prev, gs[i]->key);
        put_stat(mem, &gs[i]->gap);
        fputc('\n', mem);
    }
    if (st->inner_gap_max_ns || st->between_gaps)
        fprintf(mem, "gaps-by-burst %" PRIu64 " %" PRIu64 "\n", st->inner_gap_max_ns, st->between_gaps);
    size_t wb = 0;
    for (size_t i = 0; bs && i < nb; i++) {
        if (!bs[i]->len.count)
            continue;
        wb++;
        fprintf(mem, "burst %u", bs[i]->launches);
        put_stat(mem, &bs[i]->len);
        fputc('\n', mem);
    }
    free(ks);
    free(gs);
    free(bs);
    fflush(mem);
    uint64_t sum = fnv1a(text, text_len);
    fprintf(mem, "end %zu %zu %zu %016" PRIx64 "\n", wk, wg, wb, sum);
    if (fclose(mem) != 0 || !text) {
        free(text);
        return fikit_err_set(err, -ENOMEM, "%s: out of memory", path);
    }
    /* What is written must load: the loader reads the text first, and a
     * text it rejects is not written (the previous profile is kept). */
    int rc = fikit_profile_check_text(path, text, text_len, err);
    if (rc) {
        free(text);
        return rc;
    }

    char dirbuf[4096];
    if (strlen(path) >= sizeof dirbuf - 16) {
        free(text);
        return fikit_err_set(err, -ENAMETOOLONG, "%s: path too long", path);
    }
    snprintf(dirbuf, sizeof dirbuf, "%s", path);
    rc = mkdir_parents(dirbuf);
    if (rc) {
        free(text);
        return fikit_err_set(err, rc, "cannot create the directory of %s: %s", path,
                             strerror(-rc));
    }
    rc = fikit_file_replace(path, text, text_len);
    free(text);
    if (rc)
        return fikit_err_set(err, rc, "cannot write %s: %s; the previous profile is kept", path,
                             strerror(-rc));
    return 0;
}

/* --------------------------------------------------------------- loading */

/* Unescapes field into out (len bytes); false if it is not a valid
 * escaped name or does not fit. */
static bool take_name(char *out, size_t len, char *field)
{
    if (unescape(field) || strlen(field) >= len)
        return false;
    strcpy(out, field);
    return true;
}

struct loader {
    const char *path;
    int line;
    struct fikit_err *err;
};

#define FAIL(L, code, ...) fail_at((L), (code), __VA_ARGS__)

__attribute__((format(printf, 3, 4))) static int fail_at(struct loader *L, int code,
                                                         const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return fikit_err_set(L->err, code, "%s:%d: %s", L->path, L->line, what);
}

static int parse_u64(const char *s, int base, uint64_t *out)
{
    if (!s || !*s || *s == '-' || *s == '+')
        return -EINVAL;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, base);
    if (errno || *end)
        return -EINVAL;
    *out = v;
    return 0;
}

static int parse_u32(const char *s, uint32_t *out)
{
    uint64_t v;
    if (parse_u64(s, 10, &v) || v > UINT32_MAX)
        return -EINVAL;
    *out = (uint32_t)v;
    return 0;
}

static int parse_triple(const char *s, uint32_t out[3])
{
    char buf[64];
    if (strlen(s) >= sizeof buf)
        return -EINVAL;
    strcpy(buf, s);
    char *save = NULL, *tok = strtok_r(buf, ",", &save);
    for (int i = 0; i < 3; i++) {
        if (!tok || parse_u32(tok, &out[i]))
            return -EINVAL;
        tok = strtok_r(NULL, ",", &save);
    }
    return tok ? -EINVAL : 0;
}

/* Parses "count sum min max zero nbins idx:cnt..." from fields[0..n). */
static int parse_stat(struct loader *L, char **f, int n, struct fikit_stat *s)
{
    uint64_t nbins;
    fikit_stat_init(s);
    if (n < 6 || parse_u64(f[0], 10, &s->count) || parse_u64(f[1], 10, &s->sum) ||
        parse_u64(f[2], 10, &s->min) || parse_u64(f[3], 10, &s->max) ||
        parse_u64(f[4], 10, &s->sketch.zero_count) || parse_u64(f[5], 10, &nbins))
        return FAIL(L, -EINVAL, "bad statistic: expected count sum min max zero nbins");
    if (nbins > FIKIT_SKETCH_MAX_BINS || (uint64_t)n != 6 + nbins)
        return FAIL(L, -EINVAL, "bad statistic: %s bins declared, %d present", f[5], n - 6);
    uint64_t total = s->sketch.zero_count;
    int last = -1;
    for (int i = 0; i < (int)nbins; i++) {
        char *colon = strchr(f[6 + i], ':');
        uint64_t idx, cnt;
        if (!colon)
            return FAIL(L, -EINVAL, "bad bin '%s': expected index:count", f[6 + i]);
        *colon = '\0';
        if (parse_u64(f[6 + i], 10, &idx) || parse_u64(colon + 1, 10, &cnt) || cnt == 0 ||
            cnt > UINT32_MAX || (int)idx <= last || fikit_sketch_add_bin(&s->sketch, (int)idx,
                                                                         (uint32_t)cnt))
            return FAIL(L, -EINVAL, "bad bin '%s:%s'", f[6 + i], colon + 1);
        last = (int)idx;
        total += cnt;
    }
    if (total != s->count || (s->count && s->min > s->max))
        return FAIL(L, -EINVAL, "inconsistent statistic: count %" PRIu64 " but bins hold %" PRIu64,
                    s->count, total);
    if (s->count == 0)
        s->min = UINT64_MAX;
    return 0;
}

#define MAX_FIELDS (FIKIT_SKETCH_MAX_BINS + 16)

static int split(char *line, char **f)
{
    int n = 0;
    char *save = NULL;
    for (char *t = strtok_r(line, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
        if (n == MAX_FIELDS)
            return -1;
        f[n++] = t;
    }
    return n;
}

static int load_into(struct loader *L, FILE *fp, struct fikit_profile_meta *meta,
                     struct fikit_measure_store *st)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    char *f[MAX_FIELDS];
    int rc = 0, seen_end = 0, have_task = 0, have_model = 0, have_backend = 0;
    size_t nk = 0, ng = 0, nb = 0;
    int seen_by_burst = 0;
    uint64_t version = 0;
    uint64_t sum = 0xcbf29ce484222325ull;

    while ((len = getline(&line, &cap, fp)) != -1) {
        L->line++;
        if (seen_end) {
            rc = FAIL(L, -EINVAL, "data after the end line");
            break;
        }
        if (len == 0 || line[len - 1] != '\n') {
            rc = FAIL(L, -EINVAL, "truncated: the last line has no newline");
            break;
        }
        if (strncmp(line, "end ", 4) != 0) {
            for (ssize_t i = 0; i < len; i++) {
                sum ^= (unsigned char)line[i];
                sum *= 0x100000001b3ull;
            }
        }
        line[len - 1] = '\0';
        if (memchr(line, '\0', (size_t)len - 1)) {
            rc = FAIL(L, -EINVAL, "corrupt: NUL byte in line");
            break;
        }
        if (line[0] == '#' || line[0] == '\0')
            continue;
        int n = split(line, f);
        if (n < 0) {
            rc = FAIL(L, -EINVAL, "too many fields");
            break;
        }
        if (n == 0) /* only blanks: f[] still points into an older line */
            continue;
        if (L->line == 1) {
            uint64_t v = 0;
            if (n != 2 || strcmp(f[0], MAGIC) != 0) {
                rc = FAIL(L, -EINVAL, "not a fikit profile (expected '" MAGIC " %d')",
                          FIKIT_PROFILE_VERSION);
                break;
            }
            if (parse_u64(f[1], 10, &v) || v < 1 || v > FIKIT_PROFILE_VERSION) {
                rc = FAIL(L, -EPROTO, "profile format version %s; this fikit reads versions 1 to %d",
                          f[1], FIKIT_PROFILE_VERSION);
                break;
            }
            version = v;
            continue;
        }
        if (strcmp(f[0], "task") == 0 && n == 2) {
            if (!take_name(meta->task, sizeof meta->task, f[1])) {
                rc = FAIL(L, -EINVAL, "bad task name");
                break;
            }
            have_task = 1;
        } else if (strcmp(f[0], "device-model") == 0 && n == 2) {
            if (!take_name(meta->device_model, sizeof meta->device_model, f[1])) {
                rc = FAIL(L, -EINVAL, "bad device model");
                break;
            }
            have_model = 1;
        } else if (strcmp(f[0], "backend") == 0 && n == 2) {
            meta->backend = fikit_backend_kind_parse(f[1]);
            if (meta->backend == FIKIT_BACKEND_NONE) {
                rc = FAIL(L, -EINVAL, "unknown backend '%s' (accepted: cuda, hip, opencl)", f[1]);
                break;
            }
            have_backend = 1;
        } else if (strcmp(f[0], "sketch-accuracy") == 0 && n == 2) {
            char want[32];
            snprintf(want, sizeof want, "%g", FIKIT_SKETCH_ACCURACY);
            if (strcmp(f[1], want) != 0) {
                rc = FAIL(L, -EPROTO, "sketch accuracy %s; this fikit uses %s", f[1], want);
                break;
            }
        } else if (strcmp(f[0], "kernel") == 0 && n >= 6) {
            struct fikit_kernel_desc d = {.backend = meta->backend, .name = f[2]};
            uint64_t key;
            struct fikit_stat s;
            if (!have_backend) {
                rc = FAIL(L, -EINVAL, "kernel record before the backend line");
                break;
            }
            if (parse_u64(f[1], 16, &key) || key == FIKIT_KEY_NONE || unescape(f[2]) ||
                parse_triple(f[3], d.grid) || parse_triple(f[4], d.block) ||
                parse_u32(f[5], &d.shmem)) {
                rc = FAIL(L, -EINVAL,
                          "bad kernel record: expected 'kernel KEY NAME GX,GY,GZ BX,BY,BZ SHMEM "
                          "statistic'");
                break;
            }
            if (fikit_kernel_key(&d) != key) {
                rc = FAIL(L, -EINVAL, "kernel key %s does not match its description (%s)", f[1],
                          d.name);
                break;
            }
            rc = parse_stat(L, f + 6, n - 6, &s);
            if (!rc && (rc = fikit_measure_add_kernel(st, key, &d)))
                rc = FAIL(L, rc, "kernel %s listed twice or colliding", f[1]);
            if (!rc)
                rc = fikit_measure_merge_duration(st, key, &s);
            fikit_stat_destroy(&s);
            if (rc)
                break;
            nk++;
        } else if (strcmp(f[0], "gap") == 0 && n >= 3) {
            uint64_t prev, key;
            struct fikit_stat s;
            if (parse_u64(f[1], 16, &prev) || parse_u64(f[2], 16, &key)) {
                rc = FAIL(L, -EINVAL, "bad gap record: expected 'gap PREV KEY statistic'");
                break;
            }
            if (!fikit_measure_kernel(st, key) ||
                (prev != FIKIT_KEY_NONE && !fikit_measure_kernel(st, prev))) {
                rc = FAIL(L, -EINVAL, "gap record names a kernel with no kernel record");
                break;
            }
            if (fikit_measure_gap(st, prev, key)) {
                rc = FAIL(L, -EINVAL, "gap %s %s listed twice", f[1], f[2]);
                break;
            }
            rc = parse_stat(L, f + 3, n - 3, &s);
            if (!rc)
                rc = fikit_measure_merge_gap(st, prev, key, &s);
            fikit_stat_destroy(&s);
            if (rc)
                break;
            ng++;
        } else if (strcmp(f[0], "gaps-by-burst") == 0 && n == 3 && version >= 2) {
            uint64_t inner, between;
            if (seen_by_burst || parse_u64(f[1], 10, &inner) || parse_u64(f[2], 10, &between)) {
                rc = FAIL(L, -EINVAL, seen_by_burst ? "gaps-by-burst listed twice"
                                                    : "bad gaps-by-burst record: expected 'gaps-by-burst "
                                                      "INNER_MAX_NS BETWEEN_COUNT'");
                break;
            }
            seen_by_burst = 1;
            if (inner > st->inner_gap_max_ns)
                st->inner_gap_max_ns = inner;
            st->between_gaps += between;
        } else if (strcmp(f[0], "burst") == 0 && n >= 2 && version >= 2) {
            uint32_t launches;
            struct fikit_stat s;
            if (parse_u32(f[1], &launches) || !launches) {
                rc = FAIL(L, -EINVAL, "bad burst record: expected 'burst LAUNCHES statistic' (LAUNCHES >= 1)");
                break;
            }
            if (fikit_map_get(&st->bursts, launches, 0)) {
                rc = FAIL(L, -EINVAL, "burst %s listed twice", f[1]);
                break;
            }
            rc = parse_stat(L, f + 2, n - 2, &s);
            /* Version 2 timed the device part alone: checked and counted,
             * not kept (FIKIT_PROFILE_VERSION). */
            if (!rc && version >= 3)
                rc = fikit_measure_merge_burst(st, launches, &s);
            fikit_stat_destroy(&s);
            if (rc)
                break;
            nb++;
        } else if (strcmp(f[0], "end") == 0 && n == (version >= 2 ? 5 : 4)) {
            /* Version 1 has no burst records and no count of them. */
            uint64_t want_k, want_g, want_b = 0, want_sum;
            if (parse_u64(f[1], 10, &want_k) || parse_u64(f[2], 10, &want_g) ||
                (version >= 2 && parse_u64(f[3], 10, &want_b)) || parse_u64(f[n - 1], 16, &want_sum)) {
                rc = FAIL(L, -EINVAL, "bad end line: expected 'end KERNELS GAPS %sCHECKSUM'",
                          version >= 2 ? "BURSTS " : "");
                break;
            }
            if (want_k != nk || want_g != ng || want_b != nb) {
                rc = FAIL(L, -EINVAL,
                          "truncated or corrupt: end line counts %" PRIu64 " kernels, %" PRIu64
                          " gaps and %" PRIu64 " bursts, the file holds %zu, %zu and %zu",
                          want_k, want_g, want_b, nk, ng, nb);
                break;
            }
            if (want_sum != sum) {
                rc = FAIL(L, -EINVAL, "corrupt: checksum mismatch (the file was changed after it "
                                      "was written)");
                break;
            }
            seen_end = 1;
        } else {
            rc = FAIL(L, -EINVAL, "unknown record '%s'", f[0]);
            break;
        }
    }
    free(line);
    if (rc)
        return rc;
    if (ferror(fp))
        return FAIL(L, -EIO, "read error");
    if (L->line == 0)
        return FAIL(L, -EINVAL, "empty file");
    if (!seen_end)
        return FAIL(L, -EINVAL, "truncated: no end line");
    if (!have_task || !have_model || !have_backend)
        return FAIL(L, -EINVAL, "missing %s line", !have_task ? "task" : !have_model ? "device-model" : "backend");
    return 0;
}

/* Reads fp (closed here) into tmp, which it initialises; on failure tmp
 * is destroyed already and err says why. */
static int load_stream(const char *path, FILE *fp, struct fikit_profile_meta *m,
                       struct fikit_measure_store *tmp, struct fikit_err *err)
{
    int rc = fikit_measure_init(tmp);
    if (rc) {
        fclose(fp);
        return fikit_err_set(err, rc, "%s: out of memory", path);
    }
    struct loader L = {.path = path, .line = 0, .err = err};
    rc = load_into(&L, fp, m, tmp);
    fclose(fp);
    if (rc)
        fikit_measure_destroy(tmp);
    return rc;
}

int fikit_profile_check_text(const char *path, const char *text, size_t len, struct fikit_err *err)
{
    FILE *fp = fmemopen((void *)text, len, "r");
    if (!fp)
        return fikit_err_set(err, -ENOMEM, "%s: out of memory", path);
    struct fikit_measure_store tmp;
    struct fikit_profile_meta m = {0};
    struct fikit_err why;
    int rc = load_stream(path, fp, &m, &tmp, &why);
    if (rc)
        return fikit_err_set(err, rc, "not writing a profile that would not load (%s); the previous "
                                      "profile is kept", why.msg);
    fikit_measure_destroy(&tmp);
    return 0;
}

int fikit_profile_load(const char *path, struct fikit_profile_meta *meta,
                       struct fikit_measure_store *out, struct fikit_err *err)
{
    FILE *fp = fopen(path, "re");
    if (!fp) {
        int e = errno;
        return fikit_err_set(err, -e, "%s: %s", path, strerror(e));
    }
    struct fikit_measure_store tmp;
    struct fikit_profile_meta m = {0};
    int rc = load_stream(path, fp, &m, &tmp, err);
    if (rc)
        return rc;
    rc = fikit_measure_merge(out, &tmp);
    if (rc > 0) {
        fikit_err_set(err, 0, "%s: %d kernels skipped: their keys name other kernels already known",
                      path, rc);
        rc = 0;
    }
    if (rc == 0 && meta)
        *meta = m;
    fikit_measure_destroy(&tmp);
    return rc;
}
